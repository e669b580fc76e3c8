import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour P8 rev 4: on iOS and visionOS a refused file is transient only while the platform
/// reports protected data unavailable. `NotificationProtectedDataState` keeps that report, readable
/// at once from any thread; `SystemProtectedDataAvailability` gives it UIKit's names and
/// `UIApplication.isProtectedDataAvailable`. Here a private notification center and names stand in.
@Suite(Hang.timeLimit(minutes: 1)) struct NotificationProtectedDataStateTests {
    private static let available = Notification.Name("test.protectedDataAvailable")
    private static let unavailable = Notification.Name("test.protectedDataUnavailable")

    /// Waits until the main queue has run what was queued on it before.
    private static func mainQueueRan() async {
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
    }

    @Test(arguments: [false, true])
    func p8_thePlatformsAnswerIsKeptOnceTheMainActorGaveIt(answer: Bool) async {
        let state = NotificationProtectedDataState(
            becameAvailable: Self.available, willBecomeUnavailable: Self.unavailable, on: NotificationCenter(),
            current: { answer })
        await Self.mainQueueRan()
        #expect(state.isAvailable == answer)
    }

    @Test func p8_notificationsFollowTheDeviceAndOneBeforeTheFirstAnswerWins() async {
        let center = NotificationCenter()
        // Made off the main queue, so its question to the platform is queued behind this test's post.
        #expect(!MainQueue.isCurrent)
        let state = NotificationProtectedDataState(
            becameAvailable: Self.available, willBecomeUnavailable: Self.unavailable, on: center, current: { false })
        #expect(!state.isAvailable, "unknown counts as unavailable: a refusal stays transient")
        center.post(name: Self.available, object: nil)
        #expect(state.isAvailable)
        await Self.mainQueueRan()
        #expect(state.isAvailable, "the platform's older answer does not undo the notification")
        center.post(name: Self.unavailable, object: nil)
        #expect(!state.isAvailable)
        center.post(name: Self.available, object: nil)
        #expect(state.isAvailable)
    }
}
