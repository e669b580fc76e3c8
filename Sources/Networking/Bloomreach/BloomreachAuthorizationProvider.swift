/// Supplies the token of a Bloomreach integration, project or Data Hub stream, and hears when it
/// was refused: the way an app refreshes a short-lived JWT.
///
/// Every request asks ``token()`` first and carries `Authorization: Bearer <token>` when it returns
/// a non-empty token; when it returns `nil` (or `""`), the configuration's static
/// ``BloomreachAuthorization`` is sent instead (<doc:Behaviour#Requests>). A refreshed
/// token is used from the next request on.
///
/// When the backend answers 401 or 403, the SDK calls ``authorizationFailed()`` so the app can
/// refresh its token, waits 1 s, asks ``token()`` again and retries the request once. A second
/// refusal is reported again and fails the request with ``SegmentsError`` `.unauthorized`.
///
/// When ``token()`` throws, nothing is sent. A ``SegmentsError`` it throws fails the request as it
/// is, so a provider whose token service is only unreachable can throw `.network` and the SDK
/// treats it as transient (reloads retry with backoff, <doc:Behaviour#T7>); any other error fails
/// the request with `.unauthorized` (`.cancelled` for a `CancellationError`), the thrown error as
/// its ``SegmentsError/underlying``. Either way no tracked event is dropped: the queue waits and
/// tries again with backoff (<doc:Behaviour#E3>). Neither the token nor the thrown error's text is
/// put in a log line or an error message (<doc:Behaviour#P4>).
///
/// A 401 or 403 is reported to the provider even when it returned `nil` (the static
/// authorization was refused), so it can start supplying tokens.
///
/// ```swift
/// actor AppTokens: BloomreachAuthorizationProvider {
///     private var jwt: String?
///     func token() async throws -> String? {
///         if jwt == nil { jwt = try await myBackend.segmentsJWT() }
///         return jwt
///     }
///     func authorizationFailed() async { jwt = nil }  // the next token() fetches a new one
/// }
/// ```
///
/// The SDK may call it from several tasks at once (a fetch and an upload), never on the caller's
/// thread of a public call.
public protocol BloomreachAuthorizationProvider: Sendable {
    /// The current token, or `nil` to send the static authorization.
    /// - Throws: any error when no token can be had now; the request then fails as described above.
    func token() async throws -> String?
    /// Tells the app that the backend refused the last token (HTTP 401 or 403).
    func authorizationFailed() async
}

/// The name of ``BloomreachAuthorizationProvider`` when it served streams only.
@available(*, deprecated, renamed: "BloomreachAuthorizationProvider")
public typealias StreamAuthorizationProvider = BloomreachAuthorizationProvider

/// An app's provider held as a value: equal only to the same instance (an actor or class) or to
/// copies of the same reference, and printed or reflected without its contents, so the settings
/// holding it stay `Hashable` and never show a token the provider keeps (<doc:Behaviour#P4>).
package struct AuthorizationProviderReference: Hashable, Sendable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    /// A provider of value type has no identity of its own: the reference gets one.
    private final class Identity: Sendable {}

    package let provider: any BloomreachAuthorizationProvider
    /// The provider itself when it is an object, else the identity made for this reference.
    private let identity: ObjectIdentifier
    /// Keeps the identity made for a provider of value type alive (an object provider is kept
    /// alive by ``provider``).
    private let madeIdentity: Identity?

    package init(_ provider: any BloomreachAuthorizationProvider) {
        self.provider = provider
        if type(of: provider) is AnyClass {
            identity = ObjectIdentifier(provider as AnyObject)
            madeIdentity = nil
        } else {
            let made = Identity()
            identity = ObjectIdentifier(made)
            madeIdentity = made
        }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.identity == rhs.identity
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(identity)
    }

    /// The provider's type only, e.g. `AppTokens`.
    package var description: String { "\(type(of: provider))" }

    package var debugDescription: String { description }

    /// No children: what the provider holds is not reachable by reflection.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
