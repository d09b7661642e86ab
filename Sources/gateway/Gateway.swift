import ArgumentParser

@main
struct Gateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "The payment gateway plugin host.",
        subcommands: [ServeCommand.self, PayCommand.self, VerifyCommand.self, SessionCommand.self, ReconcileCommand.self, HeldCommand.self, KeysCommand.self, ProvidersCommand.self, PluginCommand.self, SandboxCommand.self, ApplePayCommand.self, GooglePayCommand.self])
}

/// Options every command that reads manifests shares.
struct HostOptions: ParsableArguments {
    @Option(name: .long, help: "The folder of provider manifests.")
    var manifests: String = "./manifests"

    @Option(name: .long, help: "The host's data folder (content-addressed adapter copies live under it).")
    var data: String = "./.gateway"
}
