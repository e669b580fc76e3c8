import Dispatch
import Foundation
import SegmentsDomain
import RealtimeSegments

/// Monotonic time in nanoseconds, the one time source of every benchmark.
enum Stopwatch {
    /// Nanoseconds since boot; never goes back.
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// Nanoseconds `body` took.
    static func time(_ body: () throws -> Void) rethrows -> UInt64 {
        let start = now()
        try body()
        return now() - start
    }

    /// Nanoseconds `body` took.
    static func time(_ body: () async throws -> Void) async rethrows -> UInt64 {
        let start = now()
        try await body()
        return now() - start
    }
}

/// Keeps results alive so the optimizer cannot delete the work that produced them.
enum Blackhole {
    private static let sink = Locked(0)

    /// Folds `value` into a sink that is read at the end of the run.
    static func consume(_ value: Int) {
        sink.withLock { $0 &+= value }
    }

    /// The folded value (printed nowhere; reading it keeps the writes observable).
    static var value: Int { sink.value }
}

/// A one-shot countdown: `arrive()` is called `count` times from any thread, and the moment of the
/// last arrival is what `wait` returns.
final class Countdown: Sendable {
    private struct State: Sendable {
        var remaining: Int
        var finishedAt: UInt64?
        var timedOut = false
        var waiter: CheckedContinuation<UInt64?, Never>?
    }

    private let state: Locked<State>

    init(count: Int) {
        state = Locked(State(remaining: count))
    }

    /// Counts one arrival; the last one stamps the time and wakes the waiter.
    func arrive() {
        let waiter = state.withLock { state -> (CheckedContinuation<UInt64?, Never>, UInt64)? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            let at = Stopwatch.now()
            state.finishedAt = at
            defer { state.waiter = nil }
            return state.waiter.map { ($0, at) }
        }
        if let (continuation, at) = waiter { continuation.resume(returning: at) }
    }

    /// Whether every arrival happened.
    var isFinished: Bool { state.withLock { $0.finishedAt != nil } }

    /// The moment of the last arrival, or `nil` when it did not come within `timeout` seconds.
    func wait(timeout: TimeInterval) async -> UInt64? {
        let timer = Task { [state] in
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
            let waiter = state.withLock { state -> CheckedContinuation<UInt64?, Never>? in
                state.timedOut = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let finished = state.withLock { state -> UInt64?? in
                if let at = state.finishedAt { return .some(at) }
                if state.timedOut { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let finished { continuation.resume(returning: finished) }
        }
    }
}

/// Polls `condition` every 5 ms (real time) until it holds or `timeout` seconds pass.
func eventually(timeout: TimeInterval, _ condition: () -> Bool) async -> Bool {
    let deadline = Stopwatch.now() + UInt64(timeout * 1e9)
    while Stopwatch.now() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return condition()
}
