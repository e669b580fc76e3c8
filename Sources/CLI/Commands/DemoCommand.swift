import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator

/// `segments demo`: the SDK against the embedded emulator, with segments that change because of
/// tracked events.
struct DemoCommand {
    static let help = """
        usage: segments demo [--debounce SECONDS]

        Starts the backend emulator on 127.0.0.1 with rules that turn events into segments,
        configures the SDK against it, observes the three categories through a SegmentsModel (as a
        SwiftUI view would), tracks a short journey
        (view item, add to cart, purchase, identify) and prints each segment change as it arrives;
        then sends the app to the background and back through the SDK's lifecycle port (automatic
        flushing uploads on the way out, listeners get fresh segments on the way back), and takes
        the network away for a moment through the SDK's network-path port (events tracked offline
        send nothing; when the network returns they go up in one flush and a fresh read answers).
          --debounce SECONDS   the reload debounce (default 0.3; the SDK's own default is 5)
        """

    let arguments: Arguments

    init(arguments: [String]) throws {
        self.arguments = try Arguments(arguments, options: ["debounce"])
    }

    func run() async throws {
        if arguments.wantsHelp { return print(Self.help) }
        var debounce = 0.3
        if let text = arguments.value("debounce") {
            guard let value = Double(text), value >= 0, value <= 10 else {
                throw UsageError(reason: "--debounce must be a number of seconds from 0 to 10")
            }
            debounce = value
        }
        let start = Date()
        let emulator = SegmentsEmulator()
        emulator.setRules(DemoRules.rules)
        emulator.requireAuthorization("Token demo-key")
        let baseURL = try emulator.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("segments-demo-\(UUID().uuidString)")
        defer {
            emulator.stop()
            try? FileManager.default.removeItem(at: storage)
        }

        print("RealtimeSegments demo")
        print("  backend emulator: \(baseURL.absoluteString) (project demo-project, rules: view_item → discovery,")
        print("  add_to_cart → merchandising, purchase → content, purchase with tier=gold → discovery)")
        print("  debounce shortened from 5 s to \(debounce) s (max wait \(debounce * 4) s) and the foreground refresh age")
        print("  from 60 s to \(DemoLifecycle.foregroundRefreshAge) s, so the demo takes seconds\n")

        var timings = SegmentationTimings(debounce: DebouncePolicy(delay: debounce, maxWait: debounce * 4))
        timings.foregroundRefreshAge = DemoLifecycle.foregroundRefreshAge
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(logger: SinkSegmentsLogger(level: .warning)), timings: timings, storage: .directory(storage))
        let lifecycle = DemoLifecycle()
        options.appLifecycle = lifecycle.port
        let network = DemoNetwork()
        options.networkPath = network
        let client = SegmentsClient(options: options)
        try client.configure(
            .init(
                backend: .bloomreach(
                    BloomreachConfiguration(
                        integration: .project(token: "demo-project"), baseURL: baseURL.absoluteString,
                        authorization: .token("demo-key")))))
        let ok: Bool
        do {
            ok = try await journey(
                client: client, emulator: emulator, lifecycle: lifecycle, network: network, storage: storage, start: start)
        } catch {
            // The folder is deleted only once the client's disk work is done.
            await Self.stop(client)
            throw error
        }
        if !ok { throw DemoFailure() }
    }

    /// The client's files are written once `stop`'s completion runs: only then may the demo
    /// delete its storage folder (issue 36).
    private static func stop(_ client: SegmentsClient) async {
        await withCheckedContinuation { continuation in client.stop { continuation.resume() } }
    }

    private func journey(
        client: SegmentsClient, emulator: SegmentsEmulator, lifecycle: DemoLifecycle, network: DemoNetwork, storage: URL,
        start: Date
    ) async throws -> Bool {
        let watcher = SegmentWatcher(start: start)
        let categories: [SegmentCategory] = [.discovery(), .merchandising(), .content()]
        let observer: AnyObject?
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            // A SegmentsModel, observed as a SwiftUI view observes it: each line is a change seen
            // through observation, on the main actor.
            observer = await MainActor.run { DemoModelObserver(model: SegmentsModel(categories: categories, client: client), watcher: watcher) }
            print("Observing a SegmentsModel of discovery, merchandising and content (first load included):")
        } else {
            observer = nil
            for category in categories {
                client.addListener(category: category, includeFirstLoad: true) { watcher.changed(category, $0) }
            }
            print("Listening to discovery, merchandising and content (first load included):")
        }
        defer { withExtendedLifetime(observer) {} }
        var ok = await watcher.wait(timeout: 10) { latest in categories.allSatisfy { latest[$0] != nil } }

        let journey: [(String, [String: JSONValue], SegmentCategory, String)] = [
            ("view_item", ["sku": "SKU-1", "price": 19.99], .discovery(), "browsers"),
            ("add_to_cart", ["sku": "SKU-1", "quantity": 1], .merchandising(), "cart-builders"),
            ("purchase", ["total": 19.99, "tier": "gold"], .content(), "buyers"),
        ]
        for (eventType, properties, category, expected) in journey where ok {
            print("\n→ trackEvent(\(eventType))")
            try client.trackEvent(properties: properties, timestamp: nil, eventType: eventType)
            ok = await watcher.wait(timeout: 10) { latest in latest[category]?.contains { $0.id == expected } == true }
        }
        if ok {
            print("\n→ identifyCustomer(registered: jane@example.com)")
            try client.identifyCustomer(customerIds: ["registered": "jane@example.com"], properties: ["plan": "gold"], timestamp: nil)
            let fetchesBefore = emulator.requests(on: .fetch).count
            let deadline = Date().addingTimeInterval(10)
            while emulator.requests(on: .fetch).count == fetchesBefore && Date() < deadline {
                try? await Task.sleep(nanoseconds: 20_000_000)
            }
            ok = !emulator.links.isEmpty && emulator.requests(on: .fetch).count > fetchesBefore
            print("  ids linked to the cookie, then segments fetched for the identified customer: \(ok ? "yes" : "no")")
            _ = await watcher.wait(timeout: 1) { _ in false }  // let the re-announcements (see Behaviour D3) print
        }
        if ok {
            ok = await lifecycle.runBackgroundCycle(client: client, emulator: emulator, watcher: watcher)
        }
        if ok {
            ok = await network.runOfflineStretch(client: client, emulator: emulator)
        }
        _ = await client.flush()

        let elapsed = Date().timeIntervalSince(start)
        print("\nSummary after \(String(format: "%.2f", elapsed)) s")
        for category in categories {
            let names = (watcher.segments(in: category) ?? []).map(\.id).sorted()
            print("  \(category.name.padding(toLength: 13, withPad: " ", startingAt: 0)) \(names)")
        }
        print("  requests: \(emulator.requests(on: .fetch).count) segment fetches, \(emulator.requests(on: .link).count) link, \(emulator.events.count) events, \(emulator.customerUpdates.count) customer update")

        // The demo deletes its storage folder itself: only once the client's disk work is done
        // (issue 36). The model stays: it reads [] until a next configure (see Behaviour M5).
        print("\n→ stop(completion:), then the demo deletes its storage folder")
        await Self.stop(client)
        print("  the client's disk work is done")
        if observer != nil {
            _ = await watcher.wait(timeout: 2) { latest in categories.allSatisfy { latest[$0]?.isEmpty ?? true } }
        }
        try? FileManager.default.removeItem(at: storage)
        print("  storage folder deleted")
        print(ok ? "Done: segments changed because of tracked events." : "The demo did not finish: a step timed out.")
        return ok
    }
}

struct DemoFailure: Error, CustomStringConvertible {
    var description: String { "a step of the demo timed out" }
}
