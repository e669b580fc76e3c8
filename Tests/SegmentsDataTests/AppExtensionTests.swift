import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Behaviour P12 (issue 34 item 4): inside an app extension the app-lifecycle features (E7, T11)
/// are off — `SystemAppLifecycle` forwards no notification and asks for no background time — and
/// the shared application, which extensions may not use, is never reached. The platform's names and
/// background-time function are replaced here, so the decision runs on Linux.
@Suite(Hang.timeLimit(minutes: 1)) struct AppExtensionTests {
    private static let background = Notification.Name("test.didEnterBackground")

    @Test func p12_anAppexBundleOrAnNSExtensionEntryIsAnAppExtension() {
        let app = URL(fileURLWithPath: "/private/var/containers/Bundle/Application/X/Shop.app")
        let widget = URL(fileURLWithPath: "/private/var/containers/Bundle/Application/X/Shop.app/PlugIns/Widget.appex")
        #expect(!AppExtension.isExtension(bundleURL: app, info: ["CFBundleIdentifier": "com.shop"]))
        #expect(AppExtension.isExtension(bundleURL: widget, info: nil))
        #expect(AppExtension.isExtension(bundleURL: app, info: ["NSExtension": ["NSExtensionPointIdentifier": "x"]]))
        #expect(!AppExtension.isCurrent, "a test runner is not an app extension")
    }

    /// Runs a lifecycle made as in an app extension or not; returns what reached the app's handler
    /// and how many times the platform was asked for background time.
    private func run(isAppExtension: Bool) -> (events: [AppLifecycleEvent], platformAsked: Int) {
        let center = NotificationCenter()
        let asked = Locked(0)
        let lifecycle = SystemAppLifecycle(
            isAppExtension: isAppExtension, center: center, events: [(Self.background, .didEnterBackground)],
            beginBackgroundTime: { _, _ in
                asked.withLock { $0 += 1 }
                return BackgroundTimeRequest {}
            })
        let seen = Locked<[AppLifecycleEvent]>([])
        let observation = lifecycle.observe { event in seen.withLock { $0.append(event) } }
        center.post(name: Self.background, object: nil)
        let request = lifecycle.beginBackgroundTime(named: "RealtimeSegments flush") {}
        request.cancel()
        observation.cancel()
        return (seen.value, asked.value)
    }

    @Test func p12_e7_t11_inAnAppExtensionNoLifecycleEventArrivesAndNoBackgroundTimeIsAskedFor() {
        let app = run(isAppExtension: false)
        #expect(app.events == [.didEnterBackground])
        #expect(app.platformAsked == 1)
        let appExtension = run(isAppExtension: true)
        #expect(appExtension.events.isEmpty)
        #expect(appExtension.platformAsked == 0)
    }
}

/// Behaviour P12 where the compiler would see it: no source of a library names an API that app
/// extensions may not use (`UIApplication.shared` and its kin), so a widget or notification-service
/// extension that links the SDK compiles. The shared application is reached at run time instead.
@Suite(Hang.timeLimit(minutes: 1)) struct ExtensionUnavailableAPITests {
    /// Names marked `NS_EXTENSION_UNAVAILABLE` that an SDK could reach for.
    private static let unavailable = ["UIApplication.shared", "UIApplication.sharedApplication", "sharedApplication()"]

    @Test func p12_noLibrarySourceNamesAnAPIUnavailableInAppExtensions() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        var found: [String] = []
        var scanned = 0
        for library in ["Domain", "Data", "Networking", "Persistence", "Facade", "Testing", "Emulator"] {
            let folder = sources.appendingPathComponent(library)
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                scanned += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    for name in Self.unavailable where code.contains(name) {
                        found.append("\(file.lastPathComponent):\(number + 1): \(name)")
                    }
                }
            }
        }
        #expect(scanned > 100, "the sources were found at \(sources.path)")
        #expect(found.isEmpty, "\(found)")
    }
}
