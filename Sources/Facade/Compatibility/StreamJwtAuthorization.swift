import Foundation
import SegmentsDomain
import SegmentsNetworking

/// The Stream JWT of the facade's Exponea SDK forms (``Exponea/setSdkAuthToken(_:)``,
/// ``CustomerIdentity/jwtToken``) and the app's handler of its refusals
/// (``Exponea/setJwtErrorHandler(_:)``), as the authorization provider of a stream configured
/// without one of its own (<doc:Behaviour#X1>).
///
/// It holds what the app gave it, as an app's own provider would: every request reads the token
/// of the moment, a 401 or 403 calls the handler (`.notProvided` when no token was set, else
/// `.invalid`) on an SDK thread, and the request is retried once with the token then set
/// (``BloomreachAuthorizationProvider``). The token is never logged (<doc:Behaviour#P4>).
final class StreamJwtAuthorization: BloomreachAuthorizationProvider {
    private let state = Locked<(token: String?, handler: (@Sendable (JwtErrorContext) -> Void)?)>((nil, nil))

    /// Sets the token; `nil` clears it.
    func setToken(_ token: String?) {
        state.withLock { $0.token = token }
    }

    /// Sets the handler of refusals, replacing the previous one.
    func setErrorHandler(_ handler: @escaping @Sendable (JwtErrorContext) -> Void) {
        let replaced = state.withLock { state -> (@Sendable (JwtErrorContext) -> Void)? in
            defer { state.handler = handler }
            return state.handler
        }
        // The app's closure is released after the lock.
        withExtendedLifetime(replaced) {}
    }

    func token() async throws -> String? {
        state.value.token
    }

    func authorizationFailed() async {
        let (token, handler) = state.value
        handler?(JwtErrorContext(reason: token == nil ? .notProvided : .invalid))
    }
}

/// What the facade's Exponea SDK forms keep beside the client (<doc:Behaviour#X1>): the Stream JWT
/// provider, and the configuration last applied, answered by ``Exponea/configuration``.
final class ExponeaCompatibilityState: Sendable {
    /// The provider of streams configured without one.
    let streamJwt = StreamJwtAuthorization()
    private let applied = Locked<Configuration?>(nil)

    /// The configuration last applied.
    var configuration: Configuration? { applied.value }

    /// Records `configuration` as applied.
    func record(_ configuration: Configuration) {
        applied.withLock { $0 = configuration }
    }
}
