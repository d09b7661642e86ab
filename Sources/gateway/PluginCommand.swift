import ArgumentParser
import Foundation
import GatewayPayloads
import PluginHost

struct PluginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin", abstract: "Tools for adapter authors.", subcommands: [Check.self, PluginNew.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check an adapter against its manifest: validate, load, negotiate, describe, cross-check, call every declared operation.")
        @Argument(help: "The adapter's manifest file.") var manifest: String
        @Option(name: .long, help: "The host's data folder.") var data: String = "./.gateway"
        @Option(name: .long, help: "Seconds to wait for each operation's completion.") var timeout: Int = 10
        @Option(name: .long, help: "After the checks, call the adapter for this many seconds (rounds of 100 concurrent calls), each call checked.")
        var soak: Int?
        @Flag(name: .long, help: "Print the steps as JSON.") var json = false
        @Flag(name: .long, help: "Log what the loader and the adapter do to standard error.") var verbose = false

        func run() async throws {
            var options = HostOptions()
            options.data = data
            let loader = HostSetup.loader(options, verbose: verbose)
            if let soak, !(1...86_400).contains(soak) { throw ValidationError("--soak must be 1 to 86400 seconds (got \(soak))") }
            let check = ConformanceCheck(loader: loader, callTimeout: .seconds(max(1, timeout)), soak: soak.map { .seconds($0) })
            let steps = await check.run(manifestAt: URL(fileURLWithPath: manifest))
            let passed = steps.allSatisfy(\.passed)
            if json {
                // {"manifest", "passed", "steps"}: the members (and their order) scripts have read.
                var writer = JSONWriter(capacity: 1024 * max(steps.count, 1))
                writer.beginObject()
                writer.member("manifest", manifest)
                writer.member("passed", passed)
                writer.key("steps")
                writer.beginArray()
                for step in steps { step.write(to: &writer) }
                writer.endArray()
                writer.endObject()
                print(String(decoding: JSONPretty.indented(writer.bytes), as: UTF8.self))
            } else {
                let width = steps.map(\.name.count).max() ?? 0
                for step in steps {
                    print("\(step.passed ? "PASS" : "FAIL")  \(step.name.padding(toLength: width, withPad: " ", startingAt: 0)) \(step.detail)")
                }
                let failed = steps.filter { !$0.passed }.count
                print(passed ? "\n\(manifest): all \(steps.count) checks passed" : "\n\(manifest): \(failed) of \(steps.count) checks failed")
            }
            if !passed { throw ExitCode(1) }
        }
    }
}
