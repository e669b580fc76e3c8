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
///   anything is sent (<doc:Behaviour#P7>).
/// - Redirects are never followed (<doc:Behaviour#P6>): a 3xx is returned as the response, and
///   nothing is sent to its `Location`.
/// - Any other failure without a response throws `.network`; task cancellation throws `.cancelled`.
///
/// - A request to a loopback host (`localhost`, 127/8, `::1`) never goes through a proxy
///   (<doc:Behaviour#P3>); on Linux, where libcurl takes the proxy from `http_proxy`, `https_proxy` or
///   `all_proxy`, such a request fails with `.invalidConfiguration` unless `no_proxy` names its host.
///
/// It owns its `URLSession`s (one for loopback hosts, without proxies), created with a copy of the
/// given configuration with the URL cache and cookies always off, and invalidates them when
/// released. Works from iOS 13 / macOS 10.15 on: it relies
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

    /// The configuration of the transport's session: a copy of the app's, with the URL cache and
    /// cookies off (see ``sessionConfiguration(from:)``).
    public var configuration: URLSessionConfiguration { session.configuration }

    private let session: URLSession
    private let tasks: URLSessionTaskRegistry
    /// The session for loopback hosts: the same settings without any proxy (<doc:Behaviour#P3>),
    /// made on the first loopback request (most apps never send one).
    private let direct = Locked<(session: URLSession, tasks: URLSessionTaskRegistry)?>(nil)

    /// Creates a transport with its own sessions.
    ///
    /// - Parameters:
    ///   - configuration: the session's configuration; `nil` uses an ephemeral one. The transport
    ///     works on a copy, with the URL cache and cookies always off (see
    ///     ``sessionConfiguration(from:)``): an app's configuration never makes it store segments or
    ///     URLs carrying the customer's cookie.
    ///   - timeout: the deadline of requests that set none, in seconds.
    ///   - maximumResponseSize: the largest accepted response body, in bytes.
    public init(
        configuration: URLSessionConfiguration? = nil, timeout: TimeInterval = defaultTimeout,
        maximumResponseSize: Int = defaultMaximumResponseSize
    ) {
        self.timeout = timeout
        self.maximumResponseSize = max(0, maximumResponseSize)
        (session, tasks) = Self.makeSession(
            Self.sessionConfiguration(from: configuration), name: "RealtimeSegments.URLSessionSegmentsTransport")
    }

    /// The configuration the transport's session uses: a copy of `configuration` (an ephemeral
    /// one when `nil`) with the URL cache and cookies off — `urlCache` and `httpCookieStorage`
    /// `nil`, `.reloadIgnoringLocalCacheData`, no cookies accepted or sent — whatever the app set.
    /// Segments and request URLs (which carry the customer's cookie) are never written to a cache
    /// on disk, and no cookie from a server reaches the next request.
    public static func sessionConfiguration(from configuration: URLSessionConfiguration?) -> URLSessionConfiguration {
        let copy: URLSessionConfiguration
        if let configuration, let copied = configuration.copy() as? URLSessionConfiguration {
            copy = copied
        } else {
            copy = .ephemeral
        }
        copy.urlCache = nil
        copy.requestCachePolicy = .reloadIgnoringLocalCacheData
        copy.httpCookieStorage = nil
        copy.httpCookieAcceptPolicy = .never
        copy.httpShouldSetCookies = false
        return copy
    }

    /// The configuration of the session for loopback hosts: `configuration` with an empty
    /// `connectionProxyDictionary`, so no proxy is used (<doc:Behaviour#P3>). On Linux
    /// FoundationNetworking does not apply this dictionary (libcurl reads the proxy from the
    /// environment instead), so ``send(_:)`` also refuses a loopback request that the environment
    /// would send to a proxy.
    package static func directSessionConfiguration(from configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        let copy = (configuration.copy() as? URLSessionConfiguration) ?? sessionConfiguration(from: configuration)
        copy.connectionProxyDictionary = [:]
        return copy
    }

    private static func makeSession(_ configuration: URLSessionConfiguration, name: String) -> (URLSession, URLSessionTaskRegistry) {
        let tasks = URLSessionTaskRegistry()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = name
        return (URLSession(configuration: configuration, delegate: tasks, delegateQueue: queue), tasks)
    }

    deinit {
        session.finishTasksAndInvalidate()
        direct.value?.session.finishTasksAndInvalidate()
    }

    /// Sends `request`; see the type's documentation for the errors.
    public func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
        let deadline = request.timeout ?? timeout
        // URLSession (FoundationNetworking) traps on a non-finite or huge time-out, and 0 or less
        // would fail at once: refuse it before anything is created (see Behaviour P7).
        try DurationRules.checkTimeout(deadline, "The request time-out")
        let urlRequest = urlRequest(for: request, timeout: deadline)
        guard let host = request.url.host, BaseURL.isLoopback(host) else {
            return try await tasks.send(making: { [session] in session.dataTask(with: urlRequest) }, limit: maximumResponseSize, deadline: deadline)
        }
        // A loopback request never goes through a proxy (see Behaviour P3): the proxy would see
        // the key of a plain-http request in clear text.
        #if canImport(FoundationNetworking)
            if let variable = ProxyEnvironment.proxyVariable(for: request.url, environment: ProcessInfo.processInfo.environment) {
                throw SegmentsError(
                    .invalidConfiguration,
                    "\(variable) would send this loopback request through a proxy; add the host to no_proxy")
            }
        #endif
        let (directSession, directTasks) = directSessionAndTasks()
        return try await directTasks.send(
            making: { directSession.dataTask(with: urlRequest) }, limit: maximumResponseSize, deadline: deadline)
    }

    /// The loopback session, made on first use: outside the lock (Foundation code), and a session
    /// made by a thread that lost the race is invalidated unused.
    private func directSessionAndTasks() -> (URLSession, URLSessionTaskRegistry) {
        if let made = direct.value { return made }
        let candidate = Self.makeSession(
            Self.directSessionConfiguration(from: session.configuration), name: "RealtimeSegments.URLSessionSegmentsTransport.direct")
        let winner = direct.withLock { current in
            if let current { return current }
            let made = (session: candidate.0, tasks: candidate.1)
            current = made
            return made
        }
        if winner.session !== candidate.0 { candidate.0.invalidateAndCancel() }
        return (winner.session, winner.tasks)
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
}
