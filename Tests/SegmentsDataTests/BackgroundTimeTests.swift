import Foundation
@testable import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// The background time of one flush (Behaviour E7): asked for once, ended exactly once, whatever
/// order the flush's end, the platform's expiration and the request itself come in.
@Suite(Hang.timeLimit(minutes: 1)) struct BackgroundTimeTests {
    @Test func e7_aFlushThatEndedBeforeTheRequestAsksForNothing() {
        let lifecycle = ManualAppLifecycle()
        let time = BackgroundTime()
        time.end()
        time.begin(with: lifecycle)
        #expect(lifecycle.backgroundTimeRequests.isEmpty)
    }

    @Test func e7_theFlushsEndEndsTheRequestOnceAndALaterExpirationDoesNothing() {
        let lifecycle = ManualAppLifecycle()
        let time = BackgroundTime()
        time.begin(with: lifecycle)
        #expect(lifecycle.openBackgroundTimeRequests == 1)
        time.end()
        time.end()
        lifecycle.expireBackgroundTime()
        #expect(lifecycle.backgroundTimeRequests == [.init(name: "RealtimeSegments flush", ended: true, expired: false)])
    }

    /// A platform whose time is already up: it calls the expiration before
    /// `beginBackgroundTime` returns. It keeps the request it returned until ``letGo()``, so
    /// the request's release cannot be what ends it, and counts every end the platform sees.
    private final class ExpiringAtOnce: AppLifecycle {
        let ends = Locked(0)
        private let kept = Locked<BackgroundTimeRequest?>(nil)
        func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> LifecycleObservation { LifecycleObservation {} }
        func beginBackgroundTime(named name: String, expiration: @escaping @Sendable () -> Void) -> BackgroundTimeRequest {
            let request = BackgroundTimeRequest { [ends] in ends.withLock { $0 += 1 } }
            kept.withLock { $0 = request }
            expiration()
            return request
        }
        func letGo() { kept.withLock { $0 = nil } }
    }

    @Test func e7_anExpirationBeforeTheRequestIsKeptStillEndsItOnce() {
        let lifecycle = ExpiringAtOnce()
        let time = BackgroundTime()
        time.begin(with: lifecycle)
        #expect(lifecycle.ends.value == 1, "the request the platform returned was not ended")
        time.end()
        lifecycle.letGo()
        #expect(lifecycle.ends.value == 1, "ended \(lifecycle.ends.value) times")
    }
}
