import ArgumentParser
import MerchantWebhooks

/// How `gateway serve` delivers merchants' webhooks (docs/webhooks.md "Retries").
struct MerchantWebhookOptions: ParsableArguments {
    @Flag(name: .customLong("allow-private-webhooks"),
          help: "Allow webhook endpoints on loopback, private, link-local and other non-public addresses (and plain http to them): for local development only.")
    var allowPrivate = false

    @Option(name: .customLong("webhook-timeout"), help: "Seconds an endpoint has to answer a delivery with a 2xx (default 10).")
    var timeout: Int = 10

    @Option(name: .customLong("webhook-retry-first"), help: "Seconds before the first retry of a failed delivery; each next wait doubles, with jitter (default 5).")
    var retryFirst: Int = 5

    @Option(name: .customLong("webhook-retry-longest"), help: "The longest wait between two retries, in seconds (default 21600: 6 hours).")
    var retryLongest: Int = 21_600

    @Option(name: .customLong("webhook-window"),
            help: "Seconds an endpoint may keep failing before it is disabled, its events kept for when it is enabled again (default 259200: 3 days).")
    var window: Int = 259_200

    @Option(name: .customLong("webhook-retention"), help: "Days delivered deliveries are kept, for replay (default 30).")
    var retentionDays: Int = 30

    func configuration() throws -> WebhookConfiguration {
        guard (1...60).contains(timeout) else { throw ValidationError("--webhook-timeout must be 1 to 60 seconds (got \(timeout))") }
        guard retryFirst >= 1, retryLongest >= retryFirst, retryLongest <= 7 * 86_400 else {
            throw ValidationError("--webhook-retry-first must be at least 1 second and --webhook-retry-longest from it to 604800 (got \(retryFirst) and \(retryLongest))")
        }
        guard (60...30 * 86_400).contains(window) else { throw ValidationError("--webhook-window must be 60 to 2592000 seconds (got \(window))") }
        guard (1...3650).contains(retentionDays) else { throw ValidationError("--webhook-retention must be 1 to 3650 days (got \(retentionDays))") }
        var configuration = WebhookConfiguration()
        configuration.allowPrivate = allowPrivate
        configuration.timeout = .seconds(timeout)
        configuration.schedule = RetrySchedule(first: .seconds(retryFirst), longest: .seconds(retryLongest), window: .seconds(window))
        configuration.retention = .seconds(retentionDays * 86_400)
        return configuration
    }
}
