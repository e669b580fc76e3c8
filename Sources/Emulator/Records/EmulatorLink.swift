import Foundation

/// A link-ids call: external ids attached to a cookie.
public struct EmulatorLink: Hashable, Sendable {
    /// The integration the call was sent to.
    public var integration: EmulatorIntegration
    /// The cookie from the path.
    public var cookie: String
    /// `external_ids` from the body.
    public var externalIds: [String: String]
    /// When the emulator received it.
    public var receivedAt: Date

    /// Creates a link record.
    public init(integration: EmulatorIntegration, cookie: String, externalIds: [String: String],
                receivedAt: Date = Date()) {
        self.integration = integration
        self.cookie = cookie
        self.externalIds = externalIds
        self.receivedAt = receivedAt
    }
}
