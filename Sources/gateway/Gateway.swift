import ArgumentParser

@main
struct Gateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "The payment gateway plugin host.",
        subcommands: [ServeCommand.self, PayCommand.self, VerifyCommand.self, SessionCommand.self, ReconcileCommand.self, HeldCommand.self, KeysCommand.self, WebhooksCommand.self, ProvidersCommand.self, PluginCommand.self, SandboxCommand.self, ApplePayCommand.self, GooglePayCommand.self])
}

/// Options every command that reads manifests shares.
struct HostOptions: ParsableArguments {
    @Option(name: .long, help: "The folder of provider manifests.")
    var manifests: String = "./manifests"

    @Option(name: .long, help: "The host's data folder (content-addressed adapter copies live under it).")
    var data: String = "./.gateway"

    @Option(name: .long, help: ArgumentHelp(
        "The store, for several hosts sharing one database: postgres://USER@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require&pool=N&schema=NAME&timeout=SECONDS]. Without it: SQLite at <data>/checkout.sqlite.",
        discussion: "The URL never holds the password: give it with --database-password-file or --database-password-env."))
    var database: String?

    @Option(name: .long, help: "With --database: a file whose first line is the database password.")
    var databasePasswordFile: String?

    @Option(name: .long, help: "With --database: the environment variable holding the database password.")
    var databasePasswordEnv: String?
}
