import SegmentsDomain

/// The background time of one flush on entering the background (<doc:Behaviour#E7>), ended exactly
/// once: by the flush's end or by the platform's expiration, which may come on other threads and
/// even before the request was made (a flush of nothing ends at once), in any order.
final class BackgroundTime: Sendable {
    /// The request, once asked for: ended once, whichever of the flush and the expiration comes first.
    private let slot = BackgroundTaskSlot<BackgroundTimeRequest>()

    /// Asks `lifecycle` for background time, unless the flush already finished.
    func begin(with lifecycle: any AppLifecycle) {
        guard slot.isWaitingForBegin else { return }
        // Asked for outside the lock (the platform's code); the expiration may end it at once.
        let request = lifecycle.beginBackgroundTime(named: "RealtimeSegments flush") { [weak self] in self?.end() }
        if !slot.begun(request) { request.cancel() }
    }

    /// Ends the request if it is open (outside the lock); marks it ended either way.
    func end() {
        slot.end()?.cancel()
    }
}
