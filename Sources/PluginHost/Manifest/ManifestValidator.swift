import Foundation
import GatewayPayloads
import PaymentFields

/// Turns a manifest file's bytes into a ``Manifest``, or into every problem
/// it has, each with its JSON path. Nothing here touches the library.
public enum ManifestValidator {
    /// The file format major version this host reads.
    public static let supportedFileFormatMajor = 1
    /// The first file format minor version in which `mode` is required.
    static let modeRequiredFromMinor = 1
    /// The first file format minor version in which a manifest that does not
    /// say runs `"isolation": "process"`.
    public static let processByDefaultFromMinor = 2

    static let knownKeys: Set<String> = [
        "file_format_version", "id", "version", "enabled", "mode", "description", "library", "sha256", "entry",
        "abi", "methods", "currencies", "countries", "amount", "operations", "priority", "timeout_ms", "absence_window_s",
        "config", "secrets", "egress", "isolation", "isolation_network", "sandbox_exceptions", "limits", "sandbox", "tls", "fields",
        "method_currencies",
    ]

    /// The outcome of validating one manifest.
    public enum Outcome: Sendable {
        case valid(Manifest)
        /// Not JSON at all.
        case malformed(detail: String)
        /// JSON, but not a valid v1 manifest.
        case invalid(problems: [ManifestProblem], id: String?)
    }

    /// Validates the bytes of a manifest file.
    public static func validate(_ data: Data) -> Outcome {
        // Strict RFC 8259 (no trailing commas, no leading zeros), with line:column.
        let document: JSONValue
        do {
            document = try JSONValue.parseDocument(data)
        } catch {
            return .malformed(detail: error.description)
        }
        var checker = Checker()
        let manifest = checker.manifest(from: document)
        if let manifest, checker.problems.isEmpty { return .valid(manifest) }
        let id: String? = if case .object(let o) = document, case .string(let s)? = o["id"] { s } else { nil }
        return .invalid(problems: checker.problems, id: id)
    }
}

/// Walks a document, collecting every problem rather than stopping at the first.
private struct Checker {
    var problems: [ManifestProblem] = []

    mutating func fail(_ path: String, _ message: String) {
        problems.append(ManifestProblem(path: path, message: message))
    }

    mutating func manifest(from document: JSONValue) -> Manifest? {
        guard case .object(let root) = document else {
            fail("$", "a manifest must be a JSON object, found \(document.typeName)")
            return nil
        }
        for key in root.keys.sorted() where !ManifestValidator.knownKeys.contains(key) && !key.hasPrefix("x-") {
            fail("$.\(key)", "unknown member (extensions must start with \"x-\")")
        }

        let format = string(root, "file_format_version", required: true, pattern: #"^[0-9]+\.[0-9]+\.[0-9]+$"#)
        if let format, let major = Int(format.split(separator: ".")[0]), major != ManifestValidator.supportedFileFormatMajor {
            fail("$.file_format_version", "file format \(format) is not supported; this host reads \(ManifestValidator.supportedFileFormatMajor).x.y")
        }
        let id = string(root, "id", required: true, pattern: #"^[a-z0-9][a-z0-9-]{0,62}$"#)
        let version = string(root, "version", required: true, pattern: #"^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$"#)
        let enabled = bool(root, "enabled", required: true)
        let mode = paymentMode(root, fileFormat: format)
        let description = string(root, "description", required: false, pattern: nil)
        let library = string(root, "library", required: true, pattern: #"^.+$"#)
        let sha256 = string(root, "sha256", required: false, pattern: "^[0-9a-f]{64}$")
        let entry = string(root, "entry", required: false, pattern: "^[A-Za-z_][A-Za-z0-9_]*$")
        let abi = abiVersion(root["abi"])
        let methods = stringList(root, "methods", pattern: "^[a-z0-9_]{1,32}$")
        let currencies = stringList(root, "currencies", pattern: "^[A-Z]{3}$")
        let countries = stringList(root, "countries", pattern: "^[A-Z]{2}$")
        let operationNames = stringList(root, "operations", pattern: nil)
        var operations: [PaymentOperation] = []
        for (index, name) in (operationNames ?? []).enumerated() {
            if let op = PaymentOperation(rawValue: name) {
                if let abi, abi.major == SignatureTable.hostMajor, op.introducedInMinor > abi.minor {
                    fail("$.operations[\(index)]", "\"\(name)\" needs ABI \(abi.major).\(op.introducedInMinor); this manifest declares \(abi.major).\(abi.minor)")
                }
                operations.append(op)
            } else if let abi, abi.major == SignatureTable.hostMajor, abi.minor > SignatureTable.hostMinor {
                // An operation of a later minor than this host's: the host
                // never invokes it, and the adapter keeps working without it.
                continue
            } else {
                fail("$.operations[\(index)]", "unknown operation \"\(name)\"; known: \(PaymentOperation.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        let limits = amountLimits(root["amount"], currencies: currencies ?? [])
        let priority = integer(root, "priority", range: 0...10_000) ?? Manifest.defaultPriority
        let timeout = integer(root, "timeout_ms", range: 100...600_000) ?? Manifest.defaultTimeoutMilliseconds
        let absenceWindow = integer(root, "absence_window_s", range: 0...86_400) ?? Manifest.defaultAbsenceWindowSeconds
        var configJSON = "{}"
        if let config = root["config"] {
            if case .object = config { configJSON = config.serialized }
            else { fail("$.config", "must be an object, found \(config.typeName)") }
        }
        var sandboxConfigJSON: String?
        if let sandbox = root["sandbox"] {
            if case .object(let members) = sandbox {
                for key in members.keys.sorted() where key != "config" { fail("$.sandbox.\(key)", "unknown member (the sandbox block has only \"config\")") }
                switch members["config"] {
                case .object?: sandboxConfigJSON = members["config"]!.serialized
                case nil: fail("$.sandbox.config", "is required (the config members to use against the simulators)")
                case let other?: fail("$.sandbox.config", "must be an object, found \(other.typeName)")
                }
            } else {
                fail("$.sandbox", "must be an object, found \(sandbox.typeName)")
            }
        }
        let fields = methodFields(root["fields"], methods: methods ?? [], format: format)
        let methodCurrencies = methodCurrencies(root["method_currencies"], methods: methods ?? [], currencies: currencies ?? [], format: format)
        let secrets = secretReferences(root["secrets"])
        let egress = endpoints(root["egress"])
        let tls = tlsSettings(root["tls"], secrets: secrets)
        // Unsaid: a process of its own from file format 1.2; in process before
        // (an older manifest keeps the meaning it was written with).
        let minorText = format.map { String($0.split(separator: ".").dropFirst().first ?? "") } ?? ""
        let minor = Int(minorText) ?? (!minorText.isEmpty && minorText.allSatisfy(\.isNumber) ? Int.max : 0)
        var isolation: Manifest.Isolation = minor >= ManifestValidator.processByDefaultFromMinor ? .process : .inProcess
        let isolationSaid = root["isolation"] != nil
        if let raw = string(root, "isolation", required: false, pattern: nil) {
            if let value = Manifest.Isolation(rawValue: raw) { isolation = value }
            else { fail("$.isolation", "must be \"in-process\" or \"process\", found \"\(raw)\"") }
        }
        var network = Manifest.NetworkIsolation.none
        if let raw = string(root, "isolation_network", required: false, pattern: nil) {
            if let value = Manifest.NetworkIsolation(rawValue: raw) { network = value }
            else { fail("$.isolation_network", "must be \"none\" or \"host\", found \"\(raw)\"") }
            if isolation != .process { fail("$.isolation_network", "applies only with \"isolation\": \"process\"") }
        }
        let exceptions = sandboxExceptions(root["sandbox_exceptions"], isolation: isolation)
        let runnerLimits = runnerLimits(root["limits"], isolation: isolation)

        guard let format, let id, let version, let enabled, let mode, let library, let abi,
              let methods, let currencies, let countries, operationNames != nil
        else { return nil }
        var manifest = Manifest(
            fileFormatVersion: format, id: id, version: version, enabled: enabled, mode: mode, description: description,
            library: library, sha256: sha256, entry: entry ?? Manifest.defaultEntry,
            abiMajor: abi.major, abiMinor: abi.minor, methods: methods, currencies: currencies,
            countries: countries, amountLimits: limits, operations: operations, priority: priority,
            timeoutMilliseconds: timeout, configJSON: configJSON, secrets: secrets, egress: egress,
            isolation: isolation, sandboxConfigJSON: sandboxConfigJSON, tls: tls,
            limits: runnerLimits, isolationNetwork: network, sandboxExceptions: exceptions, isolationByDefault: !isolationSaid, fields: fields, methodCurrencies: methodCurrencies)
        manifest.absenceWindowSeconds = absenceWindow
        return manifest
    }

    /// `fields`: per method the manifest lists, at most 20 fields with
    /// distinct ids, or the name of a standard form (``StandardForms``).
    mutating func methodFields(_ value: JSONValue?, methods: [String], format: String?) -> [String: [Field]] {
        guard let value else { return [:] }
        guard case .object(let members) = value else {
            fail("$.fields", "must be an object of methods, found \(value.typeName)")
            return [:]
        }
        if let format, format.hasPrefix("1.0") { fail("$.fields", "needs file_format_version 1.1.0 or later") }
        var declared: [String: [Field]] = [:]
        for method in members.keys.sorted() {
            let path = "$.fields.\(method)"
            guard methods.contains(method) else {
                fail(path, "\(method) is not one of this manifest's methods")
                continue
            }
            if case .string(let name) = members[method]! {
                if let form = StandardForms.all[name] { declared[method] = form } else {
                    fail(path, "\(name) is not a standard form (\(StandardForms.names.joined(separator: ", ")))")
                }
                continue
            }
            guard case .array(let list) = members[method]!, (1...20).contains(list.count) else {
                fail(path, "must be an array of 1 to 20 fields, or the name of a standard form")
                continue
            }
            var fields: [Field] = []
            for (index, item) in list.enumerated() {
                switch Field.parse(item, at: "\(path)[\(index)]") {
                case .success(let field):
                    if fields.contains(where: { $0.id == field.id }) { fail("\(path)[\(index)].id", "\(field.id) is declared twice") }
                    fields.append(field)
                case .failure(let error):
                    for problem in error.problems {
                        let split = problem.range(of: ": ")
                        fail(split.map { String(problem[..<$0.lowerBound]) } ?? path, split.map { String(problem[$0.upperBound...]) } ?? problem)
                    }
                }
            }
            declared[method] = fields
        }
        return declared
    }

    /// `method_currencies`: per method the manifest lists, a non-empty list of
    /// its currencies the method is offered in.
    mutating func methodCurrencies(_ value: JSONValue?, methods: [String], currencies: [String], format: String?) -> [String: [String]] {
        guard let value else { return [:] }
        guard case .object(let members) = value else {
            fail("$.method_currencies", "must be an object of methods, found \(value.typeName)")
            return [:]
        }
        if let format, format.hasPrefix("1.0") { fail("$.method_currencies", "needs file_format_version 1.1.0 or later") }
        var narrowed: [String: [String]] = [:]
        for method in members.keys.sorted() {
            let path = "$.method_currencies.\(method)"
            guard methods.contains(method) else {
                fail(path, "\(method) is not one of this manifest's methods")
                continue
            }
            guard case .array(let list) = members[method]!, !list.isEmpty else {
                fail(path, "must be a non-empty array of the manifest's currencies")
                continue
            }
            var codes: [String] = []
            for (index, item) in list.enumerated() {
                guard case .string(let code) = item, currencies.contains(code) else {
                    fail("\(path)[\(index)]", "must be one of the manifest's currencies (\(currencies.joined(separator: ", ")))")
                    continue
                }
                codes.append(code)
            }
            narrowed[method] = codes
        }
        return narrowed
    }

    /// The `limits` block: only with `"isolation": "process"`, every member optional.
    mutating func runnerLimits(_ value: JSONValue?, isolation: Manifest.Isolation) -> Manifest.Limits {
        var limits = Manifest.Limits()
        guard let value else { return limits }
        guard case .object(let members) = value else {
            fail("$.limits", "must be an object, found \(value.typeName)")
            return limits
        }
        if isolation != .process { fail("$.limits", "applies only with \"isolation\": \"process\" (an in-process adapter shares the host's limits)") }
        let known: Set<String> = ["memory_mb", "open_files", "cpu_seconds_per_call", "cancel_grace_ms", "max_crashes", "crash_window_s"]
        for key in members.keys.sorted() where !known.contains(key) {
            fail("$.limits.\(key)", "unknown member; known: \(known.sorted().joined(separator: ", "))")
        }
        limits.memoryMegabytes = integer(members, "memory_mb", range: 64...1_048_576, path: "$.limits")
        limits.openFiles = integer(members, "open_files", range: 32...1_048_576, path: "$.limits")
        limits.cpuSecondsPerCall = integer(members, "cpu_seconds_per_call", range: 1...3_600, path: "$.limits")
        limits.cancelGraceMilliseconds = integer(members, "cancel_grace_ms", range: 10...600_000, path: "$.limits") ?? limits.cancelGraceMilliseconds
        limits.maxCrashes = integer(members, "max_crashes", range: 1...1_000, path: "$.limits") ?? limits.maxCrashes
        limits.crashWindowSeconds = integer(members, "crash_window_s", range: 1...86_400, path: "$.limits") ?? limits.crashWindowSeconds
        return limits
    }

    // MARK: Members

    /// `mode`: required from file format 1.1; a 1.0 manifest without it is
    /// live (fail closed: nothing unmarked is ever taken for a test provider).
    /// Nil, with a problem, when it is missing where required or not a mode;
    /// nil without one when the file format itself is unreadable.
    mutating func paymentMode(_ o: [String: JSONValue], fileFormat: String?) -> PaymentMode? {
        let expected = PaymentMode.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        guard let value = o["mode"] else {
            guard let fileFormat else { return nil }
            // 1.0.x (minor all zeros, as the schema's `if` reads it) may leave it out; any later minor may not.
            let minor = fileFormat.split(separator: ".").dropFirst().first ?? "0"
            if !minor.allSatisfy({ $0 == "0" }) {
                fail("$.mode", "is required from file format 1.\(ManifestValidator.modeRequiredFromMinor) (\(expected)); this manifest is \(fileFormat)")
                return nil
            }
            return .live
        }
        guard case .string(let raw) = value, let mode = PaymentMode(rawValue: raw) else {
            fail("$.mode", "must be \(expected), found \(value.serialized)")
            return nil
        }
        return mode
    }

    mutating func string(_ o: [String: JSONValue], _ key: String, required: Bool, pattern: String?) -> String? {
        guard let value = o[key] else {
            if required { fail("$.\(key)", "is required") }
            return nil
        }
        guard case .string(let s) = value else {
            fail("$.\(key)", "must be a string, found \(value.typeName)")
            return nil
        }
        if let pattern, s.range(of: pattern, options: .regularExpression) == nil {
            fail("$.\(key)", "\"\(s)\" does not match \(pattern)")
            return nil
        }
        return s
    }

    mutating func bool(_ o: [String: JSONValue], _ key: String, required: Bool) -> Bool? {
        guard let value = o[key] else {
            if required { fail("$.\(key)", "is required") }
            return nil
        }
        guard case .bool(let b) = value else {
            fail("$.\(key)", "must be true or false, found \(value.typeName)")
            return nil
        }
        return b
    }

    mutating func integer(_ o: [String: JSONValue], _ key: String, range: ClosedRange<Int>, path: String = "$") -> Int? {
        guard let value = o[key] else { return nil }
        guard let i = value.integerValue else {
            fail("\(path).\(key)", "must be an integer, found \(value.typeName)")
            return nil
        }
        guard range.contains(Int(i)) else {
            fail("\(path).\(key)", "\(i) is outside \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return Int(i)
    }

    mutating func stringList(_ o: [String: JSONValue], _ key: String, pattern: String?) -> [String]? {
        guard let value = o[key] else {
            fail("$.\(key)", "is required")
            return nil
        }
        guard case .array(let items) = value else {
            fail("$.\(key)", "must be an array of strings, found \(value.typeName)")
            return nil
        }
        if items.isEmpty { fail("$.\(key)", "must not be empty") }
        var result: [String] = []
        var ok = true
        for (index, item) in items.enumerated() {
            guard case .string(let s) = item else {
                fail("$.\(key)[\(index)]", "must be a string, found \(item.typeName)")
                ok = false
                continue
            }
            if let pattern, s.range(of: pattern, options: .regularExpression) == nil {
                fail("$.\(key)[\(index)]", "\"\(s)\" does not match \(pattern)")
                ok = false
            } else if result.contains(s) {
                fail("$.\(key)[\(index)]", "\"\(s)\" is listed twice")
                ok = false
            } else {
                result.append(s)
            }
        }
        return ok ? result : nil
    }

    mutating func abiVersion(_ value: JSONValue?) -> (major: UInt32, minor: UInt32)? {
        guard let value else {
            fail("$.abi", "is required")
            return nil
        }
        guard case .object(let o) = value else {
            fail("$.abi", "must be an object {\"major\": 1, \"minor\": 0}, found \(value.typeName)")
            return nil
        }
        for key in o.keys.sorted() where key != "major" && key != "minor" { fail("$.abi.\(key)", "unknown member") }
        var parts: [UInt32] = []
        for (key, lowest) in [("major", Int64(1)), ("minor", Int64(0))] {
            guard let member = o[key] else {
                fail("$.abi.\(key)", "is required")
                continue
            }
            guard let i = member.integerValue, i >= lowest, i <= Int64(UInt32.max) else {
                fail("$.abi.\(key)", "must be an integer >= \(lowest), found \(member.serialized)")
                continue
            }
            parts.append(UInt32(i))
        }
        return parts.count == 2 ? (parts[0], parts[1]) : nil
    }

    mutating func amountLimits(_ value: JSONValue?, currencies: [String]) -> [String: Manifest.AmountLimit] {
        guard let value else { return [:] }
        guard case .object(let o) = value else {
            fail("$.amount", "must be an object keyed by currency, found \(value.typeName)")
            return [:]
        }
        var limits: [String: Manifest.AmountLimit] = [:]
        for currency in o.keys.sorted() {
            let path = "$.amount.\(currency)"
            if currency.range(of: "^[A-Z]{3}$", options: .regularExpression) == nil {
                fail(path, "\"\(currency)\" is not an ISO 4217 code")
                continue
            }
            if !currencies.isEmpty, !currencies.contains(currency) {
                fail(path, "\(currency) is not one of the manifest's currencies")
            }
            guard case .object(let bounds) = o[currency]! else {
                fail(path, "must be an object {\"min\": ..., \"max\": ...}, found \(o[currency]!.typeName)")
                continue
            }
            var limit = Manifest.AmountLimit()
            for key in bounds.keys.sorted() {
                guard key == "min" || key == "max" else {
                    fail("\(path).\(key)", "unknown member")
                    continue
                }
                guard let i = bounds[key]!.integerValue, i >= (key == "min" ? 0 : 1) else {
                    fail("\(path).\(key)", "must be an integer count of minor units \(key == "min" ? ">= 0" : ">= 1"), found \(bounds[key]!.serialized)")
                    continue
                }
                if key == "min" { limit.min = i } else { limit.max = i }
            }
            if let min = limit.min, let max = limit.max, min > max {
                fail("\(path).min", "min \(min) is greater than max \(max)")
            }
            limits[currency] = limit
        }
        return limits
    }

    mutating func secretReferences(_ value: JSONValue?) -> [String: Manifest.SecretReference] {
        guard let value else { return [:] }
        guard case .object(let o) = value else {
            fail("$.secrets", "must be an object of name -> reference, found \(value.typeName)")
            return [:]
        }
        var result: [String: Manifest.SecretReference] = [:]
        for name in o.keys.sorted() {
            let path = "$.secrets.\(name)"
            if name.range(of: "^[a-z0-9_]{1,64}$", options: .regularExpression) == nil {
                fail(path, "secret names are lower-case letters, digits and _")
            }
            guard case .string(let reference) = o[name]! else {
                fail(path, "must be a reference string \"env:VAR\" or \"file:PATH\", found \(o[name]!.typeName)")
                continue
            }
            if reference.hasPrefix("env:"), reference.dropFirst(4).range(of: "^[A-Za-z_][A-Za-z0-9_]*$", options: .regularExpression) != nil {
                result[name] = .environment(String(reference.dropFirst(4)))
            } else if reference.hasPrefix("file:"), reference.count > 5 {
                result[name] = .file(String(reference.dropFirst(5)))
            } else {
                // Never echo the value: it may be a secret pasted by mistake.
                fail(path, "must be a reference \"env:VAR\" or \"file:PATH\" (secret values never go in a manifest)")
            }
        }
        return result
    }

    mutating func tlsSettings(_ value: JSONValue?, secrets: [String: Manifest.SecretReference]) -> Manifest.TLS? {
        guard let value else { return nil }
        guard case .object(let o) = value else {
            fail("$.tls", "must be an object {\"client_certificate\", \"client_key\", \"ca_certificate\", \"pins\"}, found \(value.typeName)")
            return nil
        }
        let names = ["client_certificate", "client_key", "ca_certificate"]
        for key in o.keys.sorted() where !names.contains(key) && key != "pins" {
            fail("$.tls.\(key)", "unknown member (known: client_certificate, client_key, ca_certificate, pins)")
        }
        var resolved: [String: String] = [:]
        for key in names {
            guard let member = o[key] else { continue }
            guard case .string(let name) = member else {
                fail("$.tls.\(key)", "must be the name of a secret, found \(member.typeName)")
                continue
            }
            guard secrets[name] != nil else {
                fail("$.tls.\(key)", "names secret \"\(name)\", which $.secrets does not declare")
                continue
            }
            resolved[key] = name
        }
        if (o["client_certificate"] == nil) != (o["client_key"] == nil) {
            let missing = o["client_certificate"] == nil ? "client_certificate" : "client_key"
            let given = missing == "client_key" ? "client_certificate" : "client_key"
            fail("$.tls.\(missing)", "is required when \(given) is given (mutual TLS needs both)")
        }
        var pins: [String] = []
        if let member = o["pins"] {
            if case .array(let items) = member {
                if items.isEmpty { fail("$.tls.pins", "must not be empty (leave pins out to turn pinning off)") }
                for (index, item) in items.enumerated() {
                    guard case .string(let pin) = item, Manifest.TLS.pinDigest(pin) != nil else {
                        fail("$.tls.pins[\(index)]", "must be \"sha256/\" followed by the base64 of a 32-byte SHA-256 digest, found \(item.serialized)")
                        continue
                    }
                    if pins.contains(pin) { fail("$.tls.pins[\(index)]", "\"\(pin)\" is listed twice") }
                    else { pins.append(pin) }
                }
            } else {
                fail("$.tls.pins", "must be an array of \"sha256/<base64>\" strings, found \(member.typeName)")
            }
        }
        return Manifest.TLS(clientCertificate: resolved["client_certificate"], clientKey: resolved["client_key"],
                            caCertificate: resolved["ca_certificate"], pins: pins)
    }

    /// `sandbox_exceptions`: known layers, each once, with process isolation only.
    mutating func sandboxExceptions(_ value: JSONValue?, isolation: Manifest.Isolation) -> [SandboxLayer] {
        guard let value else { return [] }
        let known = SandboxLayer.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .array(let items) = value else {
            fail("$.sandbox_exceptions", "must be an array of sandbox layer names (\(known)), found \(value.typeName)")
            return []
        }
        if isolation != .process { fail("$.sandbox_exceptions", "applies only with \"isolation\": \"process\"") }
        var result: [SandboxLayer] = []
        for (index, item) in items.enumerated() {
            let path = "$.sandbox_exceptions[\(index)]"
            guard case .string(let name) = item, let layer = SandboxLayer(rawValue: name) else {
                fail(path, "must be one of \(known), found \(item.serialized)")
                continue
            }
            if result.contains(layer) {
                fail(path, "\"\(name)\" is listed twice")
                continue
            }
            result.append(layer)
        }
        if result.contains(.pid), !result.contains(.filesystem) {
            fail("$.sandbox_exceptions", "\"pid\" needs \"filesystem\" too: the filesystem layer mounts a /proc of the runner's own PID namespace")
        }
        return result
    }

    mutating func endpoints(_ value: JSONValue?) -> [Manifest.Endpoint] {
        guard let value else { return [] }
        guard case .array(let items) = value else {
            fail("$.egress", "must be an array of \"host:port\" strings, found \(value.typeName)")
            return []
        }
        var result: [Manifest.Endpoint] = []
        for (index, item) in items.enumerated() {
            let path = "$.egress[\(index)]"
            guard case .string(let s) = item,
                  s.range(of: "^[A-Za-z0-9.-]+:[0-9]{1,5}$", options: .regularExpression) != nil,
                  let colon = s.lastIndex(of: ":"), let port = Int(s[s.index(after: colon)...]), (1...65535).contains(port)
            else {
                fail(path, "must be \"host:port\" with a port 1-65535, found \(item.serialized)")
                continue
            }
            let endpoint = Manifest.Endpoint(host: String(s[..<colon]).lowercased(), port: port)
            if result.contains(endpoint) {
                fail(path, "\(endpoint) is listed twice")
                continue
            }
            result.append(endpoint)
        }
        return result
    }
}
