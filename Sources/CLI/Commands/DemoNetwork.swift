import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator

/// The network path of `segments demo`: the SDK's network-path port, switched by the demo as the
/// platform's monitor would report a lost and a returning network (Behaviour N1, N2).
final class DemoNetwork: NetworkPath {
    private let state = Locked((usable: true, handlers: [Int: @Sendable (NetworkPathStatus) -> Void](), next: 0))

    /// Reports the current status at once, then each change.
    func observe(_ handler: @escaping @Sendable (NetworkPathStatus) -> Void) -> LifecycleObservation {
        let (id, usable) = state.withLock { state -> (Int, Bool) in
            state.next += 1
            state.handlers[state.next] = handler
            return (state.next, state.usable)
        }
        handler(usable ? .usable : .unusable)
        return LifecycleObservation { [state] in _ = state.withLock { $0.handlers.removeValue(forKey: id) } }
    }

    private func report(usable: Bool) {
        let handlers = state.withLock { state -> [@Sendable (NetworkPathStatus) -> Void] in
            state.usable = usable
            return state.handlers.sorted { $0.key < $1.key }.map(\.value)
        }
        for handler in handlers { handler(usable ? .usable : .unusable) }
    }

    /// A short offline stretch: events tracked while the network is away send nothing (a flush and
    /// a read that needs the network fail at once); when it returns, the queue goes up in one flush
    /// and a fresh read answers. Each line says what the demo observed, in the order it observed it.
    func runOfflineStretch(client: SegmentsClient, emulator: SegmentsEmulator) async -> Bool {
        print("\n→ the network goes away; trackEvent(view_item), trackEvent(add_to_cart) while offline")
        report(usable: false)
        let eventsBefore = emulator.events.count
        do {
            try client.trackEvent(properties: ["sku": "SKU-3"], timestamp: nil, eventType: "view_item")
            try client.trackEvent(properties: ["sku": "SKU-3", "quantity": 1], timestamp: nil, eventType: "add_to_cart")
        } catch {
            print("  trackEvent failed: \(error)")
            return false
        }
        let flushed = await client.flush()
        switch flushed {
        case .failure(let error) where error.reason == .offline: print("  flush() → failed at once: offline")
        case .failure(let error): print("  flush() → failed: \(error)")
        case .success(let count): print("  flush() → uploaded \(count)")
        }
        do {
            let segments = try await client.getSegments(force: true, category: .discovery())
            print("  getSegments(force: true) → \(segments.map(\.id).sorted())")
        } catch let error as SegmentsError where error.reason == .offline {
            print("  getSegments(force: true) → failed at once: offline")
        } catch {
            print("  getSegments(force: true) → failed: \(error)")
        }
        print("  queued: \(client.queuedEventCount), uploaded: \(emulator.events.count - eventsBefore)")

        print("\n→ the network returns")
        let fetchesBefore = emulator.requests(on: .fetch).count
        report(usable: true)
        let deadline = Date().addingTimeInterval(10)
        while (client.queuedEventCount > 0 || emulator.events.count - eventsBefore < 2) && Date() < deadline {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        let uploaded = emulator.events.count - eventsBefore
        let order = emulator.events.suffix(max(uploaded, 0)).map(\.eventType).joined(separator: ", ")
        print("  queued: \(client.queuedEventCount), uploaded: \(uploaded) (\(order))")
        do {
            let segments = try await client.getSegments(force: true, category: .discovery())
            let fresh = emulator.requests(on: .fetch).count > fetchesBefore
            print("  getSegments(force: true) → \(segments.map(\.id).sorted()), fetched from the backend: \(fresh ? "yes" : "no")")
            return uploaded == 2 && fresh
        } catch {
            print("  getSegments(force: true) → failed: \(error)")
            return false
        }
    }
}
