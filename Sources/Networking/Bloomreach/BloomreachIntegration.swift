/// Which Bloomreach Engagement integration the SDK talks to: a project or a Data Hub stream, which
/// decides the path of every request (<doc:Behaviour#Requests>).
public enum BloomreachIntegration: Sendable, Hashable {
    /// A project, identified by its project token: `/webxp/projects/{token}/…`, `/track/v2/projects/{token}/…`.
    case project(token: String)
    /// A Data Hub stream, identified by its stream id: `/webxp/streams/{id}/…`, `/track/u/v1/…?stream_id={id}`.
    case stream(id: String)
}

/// The static `Authorization` header of Bloomreach requests, sent whenever no
/// ``BloomreachAuthorizationProvider`` supplies a token (<doc:Behaviour#Requests>).
///
/// ``Exponea/Authorization`` mirrors it on purpose, case for case, in the Exponea SDK's spelling for
/// the facade.
///
/// Printing never shows the credential — `description`, `debugDescription`, `dump` and `Mirror`
/// alike — so it is safe to log (<doc:Behaviour#P4>).
public enum BloomreachAuthorization: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// No `Authorization` header.
    case none
    /// `Authorization: Token <api key>`.
    case token(String)
    /// `Authorization: Bearer <token>`.
    case bearer(String)

    /// The header value, or `nil` for ``none``.
    var headerValue: String? {
        switch self {
        case .none: nil
        case .token(let key): "Token \(key)"
        case .bearer(let token): "Bearer \(token)"
        }
    }

    /// The kind of authorization, without the credential: `none`, `token(<redacted>)`, `bearer(<redacted>)`.
    public var description: String {
        switch self {
        case .none: "none"
        case .token: "token(<redacted>)"
        case .bearer: "bearer(<redacted>)"
        }
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// No children: the credential is not reachable by reflection.
    public var customMirror: Mirror {
        Mirror(self, children: [], displayStyle: .enum)
    }
}
