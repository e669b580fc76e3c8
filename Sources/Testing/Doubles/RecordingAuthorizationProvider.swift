import SegmentsDomain
import SegmentsNetworking

/// A ``BloomreachAuthorizationProvider`` for tests: hands out the token the test sets, can be made
/// to throw, and counts how often it was asked and how often the backend refused its token.
///
/// ```swift
/// let tokens = RecordingAuthorizationProvider("jwt-1")
/// // … configure with `authorizationProvider: tokens`, a RecordingTransport answers 401 once …
/// tokens.set("jwt-2")                 // the app's refresh
/// #expect(tokens.refusals == 1)
/// ```
public final class RecordingAuthorizationProvider: BloomreachAuthorizationProvider, Sendable {
    private let state: LockedValue<(token: String?, failure: (any Error)?, asked: Int, refusals: Int)>

    /// A provider answering `token` until the test changes it.
    public init(_ token: String? = nil) {
        state = LockedValue((token, nil, 0, 0))
    }

    /// The token every later ``token()`` answers (`nil`: send the static authorization).
    public func set(_ token: String?) { state.withLock { $0.token = token } }

    /// Makes every later ``token()`` throw `error`, or answer again when `nil`.
    public func fail(with error: (any Error)?) { state.withLock { $0.failure = error } }

    /// How many times ``token()`` was called.
    public var asked: Int { state.value.asked }

    /// How many times the backend refused a token (``authorizationFailed()`` calls).
    public var refusals: Int { state.value.refusals }

    /// The token set, or the error set with ``fail(with:)``.
    public func token() async throws -> String? {
        try state.withLock { state in
            state.asked += 1
            if let failure = state.failure { throw failure }
            return state.token
        }
    }

    /// Counts the refusal.
    public func authorizationFailed() async { state.withLock { $0.refusals += 1 } }
}
