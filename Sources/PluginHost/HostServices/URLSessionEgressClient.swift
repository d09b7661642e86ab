import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default egress client: Foundation's URLSession (asynchronous; no thread
/// waits on the network). Redirects are not followed: a provider's redirect is
/// handed to the adapter as a response, so it can never lead outside the allowlist.
public final class URLSessionEgressClient: NSObject, HTTPEgressClient, URLSessionTaskDelegate, @unchecked Sendable {
    private lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 64
        return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }()
    private let lock = NSLock()

    public override init() {}

    public func send(_ request: URLRequest) async throws -> (HTTPURLResponse, Data) {
        let session = lock.withLock { self.session }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else {
                throw EgressFailure(status: 10, message: "the response is not HTTP")
            }
            return (http, data)
        } catch let error as EgressFailure {
            throw error
        } catch let error as URLError {
            switch error.code {
            case .timedOut:
                throw EgressFailure(status: 6, message: "no response within the timeout")
            case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
                throw EgressFailure(status: 12, message: "could not connect: \(error.code.rawValue)")
            default:
                throw EgressFailure(status: 10, message: "the connection failed after the request may have been sent (URLError \(error.code.rawValue))")
            }
        }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
