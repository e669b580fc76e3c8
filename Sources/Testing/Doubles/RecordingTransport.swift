import Foundation
import SegmentsDomain
import SegmentsNetworking

/// A scriptable, recording ``SegmentsTransport`` for tests: it never touches the network.
///
/// Script answers per URL path, or answer everything with a closure; every request is recorded in
/// order, so a test can assert on exactly what the SDK sent. Safe to use from any thread.
///
/// ```swift
/// let transport = RecordingTransport()
/// transport.respond(to: "/webxp/projects/TOKEN/segments",
///                   with: .json(#"{"discovery": [{"id": "s1", "segmentation_id": "g1"}]}"#))
/// transport.enqueue(.status(503, headers: ["Retry-After": "2"]), for: "/webxp/projects/TOKEN/segments")
/// // … run the code under test …
/// #expect(transport.requests.count == 2)
/// #expect(transport.requests[0].queryValue("cookie") == cookie)
/// ```
///
/// For each request the transport answers with, in order of precedence: the oldest answer queued with
/// ``enqueue(_:for:)`` for its path, the answer set with ``respond(to:with:)`` for its path, and
/// otherwise the fallback (a `404` unless set by ``init(fallback:)`` or ``setFallback(_:)``).
/// A path matches when it equals the request's path either percent-encoded
/// (``SegmentsHTTPRequest/percentEncodedPath``) or decoded (``SegmentsHTTPRequest/path``).
public final class RecordingTransport: SegmentsTransport {
    /// Answers a request; may suspend, e.g. to simulate a slow server.
    public typealias Handler = @Sendable (SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse

    /// How the transport answers one request.
    public enum Answer: Sendable {
        /// Return this response.
        case response(SegmentsHTTPResponse)
        /// Throw this error, as a transport does when no response arrived (e.g. `SegmentsError(.network, …)`).
        case failure(any Error)
        /// Return what the closure returns for the request, or throw what it throws.
        case handler(Handler)

        /// A response with `status`, these headers and an empty body.
        public static func status(_ status: Int, headers: SegmentsHTTPHeaders = [:]) -> Answer {
            .response(SegmentsHTTPResponse(status: status, headers: headers))
        }

        /// A response with `status` (200 by default) whose body is `json`, sent as `application/json`.
        public static func json(_ json: String, status: Int = 200) -> Answer {
            .response(SegmentsHTTPResponse(status: status, headers: ["Content-Type": "application/json"], text: json))
        }
    }

    private struct Route: Sendable {
        var queued: [Answer] = []
        var standing: Answer?
    }

    private struct State: Sendable {
        var routes: [String: Route] = [:]
        var fallback: Answer
        var requests: [SegmentsHTTPRequest] = []
    }

    private let state: Locked<State>

    /// A transport that answers unscripted requests with `fallback` (a `404` by default).
    public init(fallback: Answer = .status(404)) {
        state = Locked(State(fallback: fallback))
    }

    /// A transport that answers unscripted requests with `handler`.
    public convenience init(handler: @escaping Handler) {
        self.init(fallback: .handler(handler))
    }

    /// Answers every request to `path` with `answer`, replacing an earlier standing answer.
    public func respond(to path: String, with answer: Answer) {
        state.withLock { $0.routes[path, default: Route()].standing = answer }
    }

    /// Answers the next request to `path` with `answer`, once. Queued answers are used oldest
    /// first, before the standing answer of ``respond(to:with:)``.
    public func enqueue(_ answer: Answer, for path: String) {
        state.withLock { $0.routes[path, default: Route()].queued.append(answer) }
    }

    /// Answers requests that no scripted path matches with `answer`.
    public func setFallback(_ answer: Answer) {
        state.withLock { $0.fallback = answer }
    }

    /// Every request received so far, oldest first.
    public var requests: [SegmentsHTTPRequest] {
        state.withLock { $0.requests }
    }

    /// The requests received so far whose path matches `path`, oldest first.
    public func requests(to path: String) -> [SegmentsHTTPRequest] {
        requests.filter { Self.matches($0, path) }
    }

    /// Forgets the recorded requests; the script stays.
    public func clearRequests() {
        state.withLock { $0.requests.removeAll() }
    }

    /// Records `request` and answers it as scripted.
    public func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
        let answer = state.withLock { state -> Answer in
            state.requests.append(request)
            let key = [request.percentEncodedPath, request.path].first { key in
                state.routes[key].map { !$0.queued.isEmpty || $0.standing != nil } ?? false
            }
            guard let key, var route = state.routes[key] else { return state.fallback }
            if !route.queued.isEmpty {
                let next = route.queued.removeFirst()
                state.routes[key] = route
                return next
            }
            return route.standing ?? state.fallback
        }
        switch answer {
        case .response(let response): return response
        case .failure(let error): throw error
        case .handler(let handler): return try await handler(request)
        }
    }

    private static func matches(_ request: SegmentsHTTPRequest, _ path: String) -> Bool {
        request.percentEncodedPath == path || request.path == path
    }
}
