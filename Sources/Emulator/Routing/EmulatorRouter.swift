import Foundation

/// The emulator's routing table: which method and path shape is which endpoint.
///
/// Each entry is data (method, path pattern, route, where the integration comes from), so a new
/// endpoint — e.g. `POST /v3/graphql` — is one more entry plus a case in the request handler.
struct EmulatorRouter: Sendable {
    /// One piece of a path pattern.
    enum Piece: Sendable, Equatable {
        /// A fixed segment.
        case literal(String)
        /// The project token (project mode).
        case projectToken
        /// The stream id (stream mode, in the path).
        case streamId
        /// The customer's cookie.
        case cookie
    }

    /// One endpoint.
    struct Endpoint: Sendable {
        var method: String
        var pattern: [Piece]
        var route: EmulatorRoute
        /// Stream-mode tracking takes the stream id from `?stream_id=` instead of the path.
        var streamIdInQuery = false
    }

    /// A request matched to an endpoint, with what the path and query said.
    struct Match: Sendable, Equatable {
        var route: EmulatorRoute
        /// The project or stream addressed; `nil` for an endpoint that belongs to neither.
        var integration: EmulatorIntegration?
        /// The cookie from the path (link-ids) or from `?cookie=` (fetch), when the endpoint has one.
        var cookie: String?
    }

    /// The routing decision.
    enum Result: Sendable, Equatable {
        case matched(Match)
        /// The path exists but not for this method; lists the methods that would work.
        case methodNotAllowed(allowed: [String])
        case notFound
        /// The endpoint matched but a required query item is missing or empty.
        case badRequest(String)
    }

    var endpoints: [Endpoint]

    /// The Bloomreach Engagement endpoints, project and stream mode ("Requests" in the wire format
    /// of `Docs/Behaviour.md`).
    static let engagement = EmulatorRouter(endpoints: [
        Endpoint(method: "GET", pattern: [.literal("webxp"), .literal("projects"), .projectToken, .literal("segments")],
                 route: .fetch),
        Endpoint(method: "GET", pattern: [.literal("webxp"), .literal("streams"), .streamId, .literal("segments")],
                 route: .fetch),
        Endpoint(method: "POST", pattern: [.literal("webxp"), .literal("projects"), .projectToken, .literal("cookies"),
                                           .cookie, .literal("link-ids")], route: .link),
        Endpoint(method: "POST", pattern: [.literal("webxp"), .literal("streams"), .streamId, .literal("cookies"),
                                           .cookie, .literal("link-ids")], route: .link),
        Endpoint(method: "POST", pattern: [.literal("track"), .literal("v2"), .literal("projects"), .projectToken,
                                           .literal("customers"), .literal("events")], route: .event),
        Endpoint(method: "POST", pattern: [.literal("track"), .literal("v2"), .literal("projects"), .projectToken,
                                           .literal("customers")], route: .customer),
        Endpoint(method: "POST", pattern: [.literal("track"), .literal("u"), .literal("v1"), .literal("customers"),
                                           .literal("events")], route: .event, streamIdInQuery: true),
        Endpoint(method: "POST", pattern: [.literal("track"), .literal("u"), .literal("v1"), .literal("customers")],
                 route: .customer, streamIdInQuery: true),
    ])

    /// The Optimizely Data Platform GraphQL endpoint: `POST /v3/graphql` ("ODP audiences query" in
    /// the wire format of `Docs/Behaviour.md`).
    static let odp = EmulatorRouter(endpoints: [
        Endpoint(method: "POST", pattern: [.literal("v3"), .literal("graphql")], route: .graphql),
    ])

    /// Every endpoint the emulator serves: Engagement and ODP.
    static let standard = EmulatorRouter(endpoints: engagement.endpoints + odp.endpoints)

    /// Routes a request by method, decoded path segments and decoded query.
    func route(method: String, components: [String], query: [String: String]) -> Result {
        var allowed: [String] = []
        for endpoint in endpoints {
            guard let captures = Self.captures(endpoint.pattern, components) else { continue }
            guard endpoint.method == method else {
                allowed.append(endpoint.method)
                continue
            }
            return resolve(endpoint, captures: captures, query: query)
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    private func resolve(_ endpoint: Endpoint, captures: [Piece: String], query: [String: String]) -> Result {
        var integration: EmulatorIntegration?
        if let token = captures[.projectToken] {
            integration = .project(token: token)
        } else if let id = captures[.streamId] {
            integration = .stream(id: id)
        } else if endpoint.streamIdInQuery {
            guard let id = query["stream_id"], !id.isEmpty else { return .badRequest("missing stream_id") }
            integration = .stream(id: id)
        }
        var cookie = captures[.cookie]
        if endpoint.route == .fetch {
            guard let queried = query["cookie"], !queried.isEmpty else { return .badRequest("missing cookie") }
            cookie = queried
        }
        return .matched(Match(route: endpoint.route, integration: integration, cookie: cookie))
    }

    /// The captured values when `components` has the pattern's shape (captures must be non-empty).
    private static func captures(_ pattern: [Piece], _ components: [String]) -> [Piece: String]? {
        guard pattern.count == components.count else { return nil }
        var captures: [Piece: String] = [:]
        for (piece, component) in zip(pattern, components) {
            if case .literal(let literal) = piece {
                guard literal == component else { return nil }
            } else {
                guard !component.isEmpty else { return nil }
                captures[piece] = component
            }
        }
        return captures
    }
}

extension EmulatorRouter.Piece: Hashable {}
