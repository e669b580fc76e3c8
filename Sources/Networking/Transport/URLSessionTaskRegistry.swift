import Foundation
import SegmentsDomain

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session delegate of ``URLSessionSegmentsTransport``: collects each task's bytes under the
/// size cap and resumes each task's continuation exactly once.
///
/// A task finishes by whichever comes first: completion, the size cap, the deadline, or
/// cancellation. Finishing removes the task's entry under the lock, so only the first of them
/// resumes the continuation; the others find nothing.
final class URLSessionTaskRegistry: NSObject, URLSessionDataDelegate, Sendable {
    private struct Entry: Sendable {
        let task: URLSessionDataTask
        let limit: Int
        let continuation: CheckedContinuation<SegmentsHTTPResponse, any Error>
        var body = Data()
    }

    private let entries = Locked<[Int: Entry]>([:])

    /// Where the session's task calls run — `dataTask(with:)`, `resume()`, `cancel()` — never on
    /// the caller's thread.
    ///
    /// FoundationNetworking (Linux) makes each of those calls wait (`DispatchQueue.sync`) for the
    /// session's work queue, whose work runs on the global threads that Swift's cooperative pool
    /// also uses: tasks of the pool waiting there can leave no thread to do that work, and every
    /// task of the process then stalls until Dispatch adds a thread (seen with both threads of a
    /// 2-core machine in `dataTask(with:)` and `resume()`). A serial queue of its own gets a thread
    /// of its own. On Apple platforms the calls return at once, and the hop costs microseconds.
    private static let sessionCalls = DispatchQueue(label: "RealtimeSegments.URLSessionTaskRegistry.sessionCalls")

    /// Makes the task (`makeTask`, on the session-calls queue), runs it to its end and answers what
    /// it got: the response, or the first of the size cap, the deadline and cancellation of the
    /// calling `Task` (see ``URLSessionSegmentsTransport``).
    ///
    /// The task must belong to a session whose delegate is this registry (or forwards to it).
    func send(
        making makeTask: @escaping @Sendable () -> URLSessionDataTask, limit: Int, deadline: TimeInterval
    ) async throws -> SegmentsHTTPResponse {
        let task = await withCheckedContinuation { made in
            Self.sessionCalls.async { made.resume(returning: makeTask()) }
        }
        return try await send(task, limit: limit, deadline: deadline)
    }

    /// Runs `task`, made on the session-calls queue, to its end.
    private func send(_ task: URLSessionDataTask, limit: Int, deadline: TimeInterval) async throws -> SegmentsHTTPResponse {
        let id = task.taskIdentifier
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                register(task, limit: limit, continuation: continuation)
                // A cancellation that came before registration found nothing to cancel.
                if Task.isCancelled {
                    finish(id, with: .failure(Self.cancelled))
                } else {
                    start(id, deadline: deadline)
                }
            }
        } onCancel: {
            finish(id, with: .failure(Self.cancelled))
        }
    }

    /// Remembers `task` until it finishes.
    func register(
        _ task: URLSessionDataTask, limit: Int, continuation: CheckedContinuation<SegmentsHTTPResponse, any Error>
    ) {
        entries.withLock { $0[task.taskIdentifier] = Entry(task: task, limit: limit, continuation: continuation) }
    }

    /// Starts a registered task and arms its deadline.
    func start(_ id: Int, deadline: TimeInterval) {
        guard let task = entries.withLock({ $0[id]?.task }) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, deadline)) { [weak self] in
            self?.finish(id, with: .failure(SegmentsError(.timeout, "The request timed out after \(deadline) s")))
        }
        Self.sessionCalls.async { task.resume() }
    }

    /// Resumes the task's continuation with `result` and cancels the task, unless it finished already.
    func finish(_ id: Int, with result: Result<SegmentsHTTPResponse, any Error>) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: id) }) else { return }
        if case .failure = result {
            Self.sessionCalls.async { entry.task.cancel() }  // after its resume(), which was queued first
        }
        entry.continuation.resume(with: result)
    }

    // The two methods below are optional requirements on Apple platforms (Objective-C protocols):
    // a signature that only nearly matches (another parameter type, a misspelt label) is no error
    // there, at most a warning, and URLSession would silently skip the method — follow the
    // redirect, or wait for the body. On Linux the protocol extension's default (follow, allow)
    // takes over without a word. Their declarations are copied from Apple's
    // (`URLSessionTaskDelegate`, `URLSessionDataDelegate`) and swift-corelibs-foundation's, which
    // agree; `DelegateWitnessTests` calls them through the protocols, as URLSession does, so a
    // near miss fails a test on every platform.

    /// Refuses every redirect (<doc:Behaviour#P6>): URLSession would otherwise re-send the headers —
    /// `Authorization`, `x-api-key` — and the body to the `Location`, whatever its host or scheme.
    /// Declining makes the 3xx itself the task's response, which ``HTTPStatusMapping`` turns into
    /// an error.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Refuses an announced length over the cap as soon as the headers arrive. On Apple platforms
    /// this is the only early check that can fire: without `Content-Type: application/json`,
    /// content sniffing holds the body back from `didReceive data` until 512 bytes or the end, so a
    /// server announcing 5 MiB and sending a few bytes would hold the request until its deadline.
    /// (FoundationNetworking ignores the disposition, so finishing also cancels the task.)
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        guard let limit = entries.withLock({ $0[id]?.limit }) else {
            completionHandler(.cancel)  // finished already (deadline, cancellation)
            return
        }
        if response.expectedContentLength > Int64(limit) {
            finish(id, with: .failure(Self.tooLarge))
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        // Also checked here: FoundationNetworking does not wait for the disposition above.
        let expected = dataTask.response?.expectedContentLength ?? -1
        let overLimit = entries.withLock { entries -> Bool in
            guard var entry = entries.removeValue(forKey: id) else { return false }
            defer { entries[id] = entry }
            if expected > Int64(entry.limit) || entry.body.count + data.count > entry.limit { return true }
            entry.body.append(data)
            return false
        }
        if overLimit {
            finish(id, with: .failure(Self.tooLarge))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let id = task.taskIdentifier
        guard let (body, limit) = entries.withLock({ $0[id].map { ($0.body, $0.limit) } }) else { return }
        if let error {
            finish(id, with: .failure(Self.mapped(error)))
        } else if let response = task.response as? HTTPURLResponse {
            if Self.wasRedirectedElsewhere(task, response) {
                // Defence in depth: the delegate above declines redirects, but should a platform
                // follow one without asking, its answer is still never taken for the server's.
                finish(id, with: .failure(SegmentsError(
                    .httpStatus, "The request was redirected to another origin; redirects are refused")))
            } else if response.expectedContentLength > Int64(limit) {
                finish(id, with: .failure(Self.tooLarge))
            } else {
                let headers = Self.headers(of: response)
                finish(id, with: .success(SegmentsHTTPResponse(status: response.statusCode, headers: headers, body: body)))
            }
        } else {
            finish(id, with: .failure(SegmentsError(.invalidResponse, "The response is not an HTTP response")))
        }
    }

    private static let tooLarge = SegmentsError(.invalidResponse, "The response body exceeds the size limit")
    private static let cancelled = SegmentsError(.cancelled, "The request was cancelled", underlying: CancellationError())

    /// Whether the final response came from another scheme, host or port than the request went to.
    private static func wasRedirectedElsewhere(_ task: URLSessionTask, _ response: HTTPURLResponse) -> Bool {
        guard let sent = task.originalRequest?.url, let answered = response.url else { return false }
        return sent.scheme?.lowercased() != answered.scheme?.lowercased()
            || sent.host?.lowercased() != answered.host?.lowercased() || sent.port != answered.port
    }

    private static func mapped(_ error: any Error) -> SegmentsError {
        if let urlError = error as? URLError, urlError.code == .timedOut {
            return SegmentsError(.timeout, "The request timed out", underlying: error)
        }
        // The error's own text may carry the URL (with a `cookie=` query) on some platforms: only
        // its type and code (see Behaviour P4).
        return SegmentsError(.network, "The request failed: \(SegmentsError.summary(of: error))", underlying: error)
    }

    private static func headers(of response: HTTPURLResponse) -> SegmentsHTTPHeaders {
        var headers = SegmentsHTTPHeaders()
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String else { continue }
            headers.add(name: name, value: (value as? String) ?? String(describing: value))
        }
        return headers
    }
}
