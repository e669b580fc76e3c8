import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// The lifecycle port's live parts that every platform shares (Behaviour E7, T11): the
/// notification forwarding, the platform handle's slot, the expiring activity, and the background
/// time of one flush. The Apple files only give them names and calls.
@Suite(Hang.timeLimit(minutes: 1)) struct AppLifecyclePortTests {
    private static let names: [(Notification.Name, AppLifecycleEvent)] = AppLifecycleEvent.allCases.map {
        (Notification.Name("test.lifecycle.\($0.rawValue).\(UUID().uuidString)"), $0)
    }

    @Test func e7_t11_notificationsOfTheCenterAreForwardedAsTheirEventsUntilTheObservationEnds() {
        let center = NotificationCenter()
        let lifecycle = NotificationAppLifecycle(center: center, events: Self.names)
        let seen = Locked<[AppLifecycleEvent]>([])
        let observation = lifecycle.observe { event in seen.withLock { $0.append(event) } }
        for (name, _) in Self.names.reversed() { center.post(name: name, object: nil) }
        center.post(name: Notification.Name("test.lifecycle.unrelated"), object: nil)
        #expect(seen.value == AppLifecycleEvent.allCases.reversed())

        observation.cancel()
        #expect(observation.isCancelled)
        center.post(name: Self.names[0].0, object: nil)
        #expect(seen.value.count == AppLifecycleEvent.allCases.count)
    }

    @Test func e7_aReleasedObservationStopsForwarding() {
        let center = NotificationCenter()
        let lifecycle = NotificationAppLifecycle(center: center, events: Self.names)
        let seen = Locked(0)
        do {
            let observation = lifecycle.observe { _ in seen.withLock { $0 += 1 } }
            center.post(name: Self.names[0].0, object: nil)
            _ = observation
        }
        center.post(name: Self.names[0].0, object: nil)
        #expect(seen.value == 1)
    }

    @Test func t11_onLinuxTheSystemLifecycleForwardsNothingAndItsBackgroundTimeIsANoOp() {
        #if os(Linux)
        let lifecycle = SystemAppLifecycle()
        let seen = Locked(0)
        let observation = lifecycle.observe { _ in seen.withLock { $0 += 1 } }
        // The names UIKit posts, as a port that listened for them would hear them.
        for name in ["DidBecomeActive", "WillResignActive", "DidEnterBackground", "WillEnterForeground"] {
            NotificationCenter.default.post(name: Notification.Name("UIApplication\(name)Notification"), object: nil)
        }
        #expect(seen.value == 0)
        let expired = Locked(false)
        let request = lifecycle.beginBackgroundTime(named: "x") { expired.withLock { $0 = true } }
        request.cancel()
        #expect(request.isCancelled)
        #expect(!expired.value)
        observation.cancel()
        #endif
    }

    @Test func e7_theSlotEndsTheHandleOnceWhicheverComesFirst() {
        let begunFirst = BackgroundTaskSlot<Int>()
        #expect(begunFirst.begun(7))
        #expect(begunFirst.end() == 7)
        #expect(begunFirst.end() == nil)

        let endedFirst = BackgroundTaskSlot<Int>()
        #expect(endedFirst.end() == nil)
        #expect(!endedFirst.begun(8))  // the caller ends 8 at once
        #expect(endedFirst.end() == nil)
    }

    /// A platform's expiring activity on a thread of its own, as watchOS runs it.
    private final class ActivityPlatform: Sendable {
        let finished = DispatchSemaphore(value: 0)
        let block = Locked<(@Sendable (Bool) -> Void)?>(nil)

        var perform: ExpiringActivity.Perform {
            { [self] _, block in
                self.block.withLock { $0 = block }
                Thread.detachNewThread { [self] in
                    block(false)
                    finished.signal()
                }
            }
        }

        func expire() { block.value?(true) }
    }

    /// Proven by order, not by a window of time: the activity's block is seen waiting for the
    /// request's end, and it has not returned then; it returns once the request ends.
    @Test func e7_anExpiringActivityLastsUntilTheRequestEnds() {
        let platform = ActivityPlatform()
        let waiting = DispatchSemaphore(value: 0)
        let request = ExpiringActivity.begin(
            named: "flush", expiration: {}, perform: platform.perform,
            waitForEnd: { ended in
                waiting.signal()
                ended.wait()
            })
        #expect(waiting.wait(timeout: .now() + Hang.scaled(30)) == .success, "the activity's block did not wait for the request's end")
        #expect(platform.finished.wait(timeout: .now()) == .timedOut, "the activity's block returned before the request ended")
        request.cancel()
        #expect(platform.finished.wait(timeout: .now() + Hang.scaled(30)) == .success)
    }

    @Test func e7_anExpiringActivityWhoseTimeIsUpCallsTheExpirationAndEnds() {
        let platform = ActivityPlatform()
        let expirations = Locked(0)
        let request = Locked<BackgroundTimeRequest?>(nil)
        request.withLock {
            $0 = ExpiringActivity.begin(
                named: "flush", expiration: { expirations.withLock { $0 += 1 }; request.value?.cancel() },
                perform: platform.perform)
        }
        platform.expire()
        #expect(platform.finished.wait(timeout: .now() + Hang.scaled(30)) == .success)
        #expect(expirations.value == 1)
        #expect(request.value?.isCancelled == true)
    }

    /// The platform's "time is up" ends the activity even when the expiration handler does not end
    /// the request: the block that waits returns, so the activity is never left open (E7).
    @Test func e7_anExpiringActivityWhoseTimeIsUpEndsEvenIfTheRequestIsNotEnded() {
        let platform = ActivityPlatform()
        let waiting = DispatchSemaphore(value: 0)
        let expirations = Locked(0)
        let request = ExpiringActivity.begin(
            named: "flush", expiration: { expirations.withLock { $0 += 1 } }, perform: platform.perform,
            waitForEnd: { ended in
                waiting.signal()
                ended.wait()
            })
        #expect(waiting.wait(timeout: .now() + Hang.scaled(30)) == .success, "the activity's block did not wait")
        platform.expire()
        #expect(platform.finished.wait(timeout: .now() + Hang.scaled(30)) == .success, "the activity outlived its time")
        #expect(expirations.value == 1)
        #expect(!request.isCancelled, "the handler did not end the request")
        request.cancel()
    }
}
