import Foundation
import SegmentsDomain

/// An ``AppLifecycle`` that forwards a `NotificationCenter`'s notifications as lifecycle events and
/// asks for background time through the function it is given.
///
/// `SystemAppLifecycle` is this, made with the platform's notification names and background-time
/// function. Where the platform reports nothing (Linux), an app that has a lifecycle of its own
/// gives the client one of these and posts to its center:
///
/// ```swift
/// let center = NotificationCenter()
/// let background = Notification.Name("app.background")
/// var options = SegmentsClient.Options()
/// options.appLifecycle = NotificationAppLifecycle(center: center, events: [(background, .didEnterBackground)])
/// // …
/// center.post(name: background, object: nil)      // queued events are flushed (E2, E7)
/// ```
public struct NotificationAppLifecycle: AppLifecycle {
    /// How a platform asks for background time: the request's name and its expiration handler.
    public typealias BeginBackgroundTime = @Sendable (String, @escaping @Sendable () -> Void) -> BackgroundTimeRequest

    private let center: NotificationCenter
    private let events: [(Notification.Name, AppLifecycleEvent)]
    private let begin: BeginBackgroundTime

    /// Forwards `events` posted to `center` (by any object, on the posting thread); `begin` asks for
    /// background time (by default there is none: the request ends without doing anything).
    public init(
        center: NotificationCenter, events: [(Notification.Name, AppLifecycleEvent)],
        beginBackgroundTime begin: @escaping BeginBackgroundTime = { _, _ in BackgroundTimeRequest {} }
    ) {
        self.center = center
        self.events = events
        self.begin = begin
    }

    /// Calls `handler` with the event of each of the names posted to the center, until the
    /// observation ends.
    public func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> LifecycleObservation {
        NotificationForwarding.observe(events, on: center, handler)
    }

    /// Asks for background time with the function given at `init`.
    public func beginBackgroundTime(named name: String, expiration: @escaping @Sendable () -> Void) -> BackgroundTimeRequest {
        begin(name, expiration)
    }
}

package enum NotificationForwarding {
    /// Calls `handler` with the value paired with each notification name posted to `center` (by
    /// any object, on the posting thread) until the returned observation ends.
    package static func observe<Value: Sendable>(
        _ names: [(Notification.Name, Value)], on center: NotificationCenter, _ handler: @escaping @Sendable (Value) -> Void
    ) -> LifecycleObservation {
        let tokens = ObserverTokens(
            names.map { name, value in
                center.addObserver(forName: name, object: nil, queue: nil) { _ in handler(value) }
            })
        return LifecycleObservation {
            for token in tokens.tokens { center.removeObserver(token) }
        }
    }
}

/// NotificationCenter's observer tokens, carried into the `@Sendable` end of an observation.
/// Audited: they are only handed back to `removeObserver`, which any thread may call.
private struct ObserverTokens: @unchecked Sendable {
    let tokens: [any NSObjectProtocol]
    init(_ tokens: [any NSObjectProtocol]) { self.tokens = tokens }
}

/// The handle of one background-time request, begun and ended in any order, on any threads
/// (<doc:Behaviour#E7>): ended before the begin came, the handle, once it comes, is ended at once;
/// ended twice, it ends once. The platform's task (UIKit) and the SDK's request for one flush
/// (`BackgroundTime`) both keep theirs in one.
package final class BackgroundTaskSlot<Handle: Sendable>: Sendable {
    private enum State { case waitingForBegin, begun(Handle), ended }
    private let state = Locked<State>(.waitingForBegin)

    /// An empty slot.
    package init() {}

    /// Whether neither the begin nor the end came yet.
    package var isWaitingForBegin: Bool {
        state.withLock { state in
            if case .waitingForBegin = state { return true }
            return false
        }
    }

    /// The request began as `handle`. Returns `false` when it was ended meanwhile: the caller then
    /// ends `handle` at once.
    package func begun(_ handle: Handle) -> Bool {
        state.withLock { state in
            guard case .waitingForBegin = state else { return false }
            state = .begun(handle)
            return true
        }
    }

    /// Ends the request: the handle to end now (outside the lock), if it was begun and not ended yet.
    package func end() -> Handle? {
        state.withLock { state in
            defer { state = .ended }
            if case .begun(let handle) = state { return handle }
            return nil
        }
    }
}

/// Background time where the platform lends it through `ProcessInfo.performExpiringActivity`
/// (watchOS): the activity lasts while its block runs, so the block waits until the request ends
/// or the time runs out (<doc:Behaviour#E7>).
package enum ExpiringActivity {
    /// How the platform runs an activity: its reason and a block called with `false` to run it and
    /// with `true` when its time is up.
    package typealias Perform = @Sendable (String, @escaping @Sendable (Bool) -> Void) -> Void

    /// Asks `perform` for an activity that lasts until the returned request ends; on expiry
    /// `expiration` runs (it ends the request) and the activity's block returns.
    /// - Parameter waitForEnd: how the activity's block waits for the semaphore the request's end
    ///   signals; a test passes one that also reports the block is waiting.
    package static func begin(
        named name: String, expiration: @escaping @Sendable () -> Void, perform: Perform,
        waitForEnd: @escaping @Sendable (DispatchSemaphore) -> Void = { $0.wait() }
    ) -> BackgroundTimeRequest {
        let ended = DispatchSemaphore(value: 0)
        let request = BackgroundTimeRequest { ended.signal() }
        perform(name) { expired in
            if expired {
                expiration()
                ended.signal()
            } else {
                // The activity is the time this block runs: it waits (on the platform's own thread)
                // for the end of the request.
                waitForEnd(ended)
            }
        }
        return request
    }
}
