import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator

/// The app lifecycle of `segments demo`: the SDK's lifecycle port, posted to by the demo as an
/// app's system would post to it (Behaviour E2, E7, T11). It prints each request for background
/// time and its end.
final class DemoLifecycle: Sendable {
    /// Shortened from 60 s so that the return to the foreground refreshes after a few seconds.
    static let foregroundRefreshAge: TimeInterval = 1

    private let center = NotificationCenter()
    private static func name(_ event: AppLifecycleEvent) -> Notification.Name {
        Notification.Name("segments-demo.\(event.rawValue)")
    }

    /// The port the client is given.
    let port: NotificationAppLifecycle

    init() {
        port = NotificationAppLifecycle(
            center: center, events: AppLifecycleEvent.allCases.map { (Self.name($0), $0) },
            beginBackgroundTime: { name, _ in
                print("  background time asked for (\"\(name)\")")
                return BackgroundTimeRequest { print("  background time ended") }
            })
    }

    private func post(_ event: AppLifecycleEvent) {
        center.post(name: Self.name(event), object: nil)
    }

    /// Automatic flushing holds an event until the app goes to the background, where it is
    /// uploaded within background time; while the app is away, the server's segments change; back
    /// in the foreground, listeners are told.
    func runBackgroundCycle(client: SegmentsClient, emulator: SegmentsEmulator, watcher: SegmentWatcher) async -> Bool {
        print("\n→ flushingMode = .automatic, then trackEvent(add_to_cart)")
        client.flushingMode = .automatic
        let eventsBefore = emulator.events.count
        do {
            try client.trackEvent(properties: ["sku": "SKU-2", "quantity": 2], timestamp: nil, eventType: "add_to_cart")
        } catch {
            print("  trackEvent failed: \(error)")
            return false
        }
        try? await Task.sleep(nanoseconds: 300_000_000)
        print("  queued: \(client.queuedEventCount), uploaded: \(emulator.events.count - eventsBefore)")

        print("\n→ the app goes to the background")
        post(.willResignActive)
        post(.didEnterBackground)
        var ok = await watcher.wait(timeout: 10) { latest in latest[.merchandising()]?.contains { $0.id == "repeat-carts" } == true }
        print("  queued: \(client.queuedEventCount), uploaded: \(emulator.events.count - eventsBefore)")

        print("\n→ while the app is away, the server adds a segment; then the app returns to the foreground")
        emulator.setRules(DemoRules.rules + [DemoRules.returningVisitors])
        try? await Task.sleep(nanoseconds: UInt64(Self.foregroundRefreshAge * 1_000_000_000) + 100_000_000)
        let fetchesBefore = emulator.requests(on: .fetch).count
        post(.willEnterForeground)
        post(.didBecomeActive)
        ok = await watcher.wait(timeout: 10) { latest in latest[.discovery()]?.contains { $0.id == "returning-visitors" } == true } && ok
        print("  segments refreshed on the return: \(emulator.requests(on: .fetch).count > fetchesBefore ? "yes" : "no")")
        return ok
    }
}
