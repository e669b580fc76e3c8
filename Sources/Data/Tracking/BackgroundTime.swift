import SegmentsDomain

/// The background time of one flush on entering the background (<doc:Behaviour#E7>), ended exactly
/// once: by the flush's end or by the platform's expiration, which may come on other threads and
/// even before the request was made (a flush of nothing ends at once), in any order.
final class BackgroundTime: Sendable {
    private enum State {
        /// Not asked for yet.
        case notAsked
        /// Asked for; the request is open.
        case open(BackgroundTimeRequest)
        /// Ended (or the flush finished before it was asked for: then it never is).
        case ended
    }

    private let state = Locked<State>(.notAsked)

    /// Asks `lifecycle` for background time, unless the flush already finished.
    func begin(with lifecycle: any AppLifecycle) {
        guard case .notAsked = state.value else { return }
        // Asked for outside the lock (the platform's code); the expiration may end it at once.
        let request = lifecycle.beginBackgroundTime(named: "RealtimeSegments flush") { [weak self] in self?.end() }
        let endNow = state.withLock { state -> Bool in
            guard case .notAsked = state else { return true }
            state = .open(request)
            return false
        }
        if endNow { request.cancel() }
    }

    /// Ends the request if it is open (outside the lock); marks it ended either way.
    func end() {
        let open = state.withLock { state -> BackgroundTimeRequest? in
            defer { state = .ended }
            if case .open(let request) = state { return request }
            return nil
        }
        open?.cancel()
    }
}
