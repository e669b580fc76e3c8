import Foundation

/// An endpoint family of the emulator, used to aim faults and to label logged requests.
///
/// A struct rather than an enum so that new endpoints (such as a GraphQL route) can be added
/// without breaking code that switches over routes.
public struct EmulatorRoute: Hashable, Sendable, CustomStringConvertible {
    /// The route's name, e.g. `fetch`.
    public let name: String

    /// Creates a route name; the predefined constants cover every endpoint served today.
    public init(_ name: String) {
        self.name = name
    }

    /// `GET …/segments?cookie=` (project and stream mode).
    public static let fetch = EmulatorRoute("fetch")
    /// `POST …/cookies/{cookie}/link-ids` (project and stream mode).
    public static let link = EmulatorRoute("link")
    /// `POST …/customers/events` (project and stream mode).
    public static let event = EmulatorRoute("event")
    /// `POST …/customers` (project and stream mode).
    public static let customer = EmulatorRoute("customer")
    /// `POST /v3/graphql` (ODP audiences).
    public static let graphql = EmulatorRoute("graphql")
    /// Matches every route when aiming a fault; never the label of a logged request.
    public static let any = EmulatorRoute("any")

    /// The route's name.
    public var description: String { name }
}
