import Foundation

/// The four Bloomreach requests — fetch segments, link ids, event, customer update — and where each
/// goes in either integration (<doc:Behaviour#Requests>).
enum BloomreachEndpoint: Hashable, Sendable {
    /// `GET …/segments?cookie={cookie}`.
    case segments(cookie: String)
    /// `POST …/cookies/{cookie}/link-ids`.
    case linkIds(cookie: String)
    /// `POST` an event.
    case event
    /// `POST` a customer update.
    case customerUpdate

    var method: SegmentsHTTPRequest.Method {
        switch self {
        case .segments: .get
        case .linkIds, .event, .customerUpdate: .post
        }
    }

    /// What the request does, for error messages: no ids, no credentials.
    var operation: String {
        switch self {
        case .segments: "Fetching segments"
        case .linkIds: "Linking customer ids"
        case .event: "Uploading an event"
        case .customerUpdate: "Uploading a customer update"
        }
    }

    /// The unencoded path segments and query items of this endpoint for `integration`.
    func route(for integration: BloomreachIntegration) -> (path: [String], query: [(name: String, value: String)]) {
        switch (self, integration) {
        case (.segments(let cookie), .project(let token)):
            (["webxp", "projects", token, "segments"], [("cookie", cookie)])
        case (.segments(let cookie), .stream(let id)):
            (["webxp", "streams", id, "segments"], [("cookie", cookie)])
        case (.linkIds(let cookie), .project(let token)):
            (["webxp", "projects", token, "cookies", cookie, "link-ids"], [])
        case (.linkIds(let cookie), .stream(let id)):
            (["webxp", "streams", id, "cookies", cookie, "link-ids"], [])
        case (.event, .project(let token)):
            (["track", "v2", "projects", token, "customers", "events"], [])
        case (.event, .stream(let id)):
            (["track", "u", "v1", "customers", "events"], [("stream_id", id)])
        case (.customerUpdate, .project(let token)):
            (["track", "v2", "projects", token, "customers"], [])
        case (.customerUpdate, .stream(let id)):
            (["track", "u", "v1", "customers"], [("stream_id", id)])
        }
    }
}
