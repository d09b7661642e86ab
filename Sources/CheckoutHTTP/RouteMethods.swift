import HTTPTypes
import Hummingbird
import Synchronization

/// The methods each route path answers, so that a request for a path that
/// exists, with a method it does not take, is a `405 Method Not Allowed`
/// with an `Allow` header listing the path's methods (RFC 9110 §15.5.6)
/// rather than the router's `404`.
///
/// Filled once from the router's own route list after every route is added
/// (``CheckoutAPI/router(webhooks:)``). A path is matched as Hummingbird's
/// router matches it: by its non-empty components, a constant component
/// before a capture.
final class RouteMethods: Sendable {
    private let table = Mutex<[(path: RouterPath, methods: [HTTPRequest.Method])]>([])

    /// Records `routes` (Hummingbird's ``Router/routes``), grouped by path.
    func record(_ routes: [APIRouter.RouteDescription]) {
        var grouped: [(path: RouterPath, methods: [HTTPRequest.Method])] = []
        for route in routes {
            if let index = grouped.firstIndex(where: { $0.path == route.path }) {
                grouped[index].methods.append(route.method)
            } else {
                grouped.append((route.path, [route.method]))
            }
        }
        let sorted = grouped.map { ($0.path, $0.methods.sorted { $0.rawValue < $1.rawValue }) }
        table.withLock { $0 = sorted }
    }

    /// The methods that `path` (a request's path) answers, or nil when no
    /// route has that path.
    func methods(forPath path: String) -> [HTTPRequest.Method]? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        return table.withLock { table in
            var best: (methods: [HTTPRequest.Method], constants: [Bool])?
            for route in table where route.path.components.count == components.count {
                guard zip(route.path.components, components).allSatisfy({ $0 ~= $1 }) else { continue }
                let constants = zip(route.path.components, components).map { $0 == $1 }
                // The router prefers a constant component to a capture, leftmost first.
                if let current = best, !constants.lexicographicallyPrecedes(current.constants, by: { $0 && !$1 }) { continue }
                best = (route.methods, constants)
            }
            return best?.methods
        }
    }

    /// An `Allow` header's value: `GET, HEAD`.
    static func allowHeader(_ methods: [HTTPRequest.Method]) -> String {
        methods.map(\.rawValue).joined(separator: ", ")
    }
}
