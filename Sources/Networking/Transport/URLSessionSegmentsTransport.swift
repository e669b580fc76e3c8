import Foundation
import SegmentsDomain

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default ``SegmentsTransport``: `URLSession`, with a deadline per request and a cap on the
/// response size.
///
/// - The deadline covers the whole exchange: ``SegmentsHTTPRequest/timeout`` or, when the request
///   has none, ``timeout`` (10 s by default). Exceeding it throws ``SegmentsError`` `.timeout`.
/// - A response body larger than ``maximumResponseSize`` (1 MiB by default) throws
///   `.invalidResponse`; the download is cancelled as soon as the announced length (checked when
///   the headers arrive, before any body) or the bytes received exceed the cap, so a hostile or
///   broken server cannot make the SDK buffer without bound, nor wait for a body it announced.
/// - A deadline that is not finite, 0 or less, or over 300 s throws `.invalidConfiguration` before
///   anything is sent (see Behaviour P7).
/// - Redirects are never followed (see Behaviour P6): a 3xx is returned as the response, and nothing is
///   sent to its `Location`.
/// - Any other failure without a response throws `.network`; task cancellation throws `.cancelled`.
///
/// It owns its `URLSession` (cookies and caching off by default), created with the given
/// configuration, and invalidates it when released. Works from iOS 13 / macOS 10.15 on: it relies
/// on a session delegate rather than `URLSession.data(for:)`.
public final class URLSessionSegmentsTransport: SegmentsTransport {
    /// The deadline of a request that sets none: 10 s.
    public static let defaultTimeout: TimeInterval = 10
    /// The largest accepted response body: 1 MiB.
    public static let defaultMaximumResponseSize = 1 << 20

    /// The deadline of a request whose ``SegmentsHTTPRequest/timeout`` is `nil`, in seconds; a
    /// request fails with `.invalidConfiguration` when its deadline is not within `0 < t ≤ 300`.
    public let timeout: TimeInterval
    /// The largest accepted response body, in bytes.
    public let maximumResponseSize: Int

    private let session: URLSession
    private let tasks: URLSessionTaskRegistry

    /// Creates a transport with its own session.
    ///
    /// - Parameters:
    ///   - configuration: the session's configuration; `nil` uses an ephemeral one that stores no
    ///     cookies and caches nothing.
    ///   - timeout: the deadline of requests that set none, in seconds.
    ///   - maximumResponseSize: the largest accepted response body, in bytes.
    public init(
        configuration: URLSessionConfiguration? = nil, timeout: TimeInterval = defaultTimeout,
        maximumResponseSize: Int = defaultMaximumResponseSize
    ) {
        self.timeout = timeout
        self.maximumResponseSize = max(0, maximumResponseSize)
        let tasks = URLSessionTaskRegistry()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "RealtimeSegments.URLSessionSegmentsTransport"
        self.tasks = tasks
        self.session = URLSession(
            configuration: configuration ?? Self.ephemeralConfiguration(), delegate: tasks, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request`; see the type's documentation for the errors.
    public func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
        let deadline = request.timeout ?? timeout
        // URLSession (FoundationNetworking) traps on a non-finite or huge time-out, and 0 or less
        // would fail at once: refuse it before anything is created (see Behaviour P7).
        try DurationRules.checkTimeout(deadline, "The request time-out")
        let task = session.dataTask(with: urlRequest(for: request, timeout: deadline))
        return try await tasks.send(task, limit: maximumResponseSize, deadline: deadline)
    }

    private func urlRequest(for request: SegmentsHTTPRequest, timeout: TimeInterval) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        urlRequest.httpShouldHandleCookies = false
        return urlRequest
    }

    private static func ephemeralConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }
}
