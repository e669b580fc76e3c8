// The facade's fixed API exactly as apps write it (the block of the product's API contract, which
// these names and signatures must keep compiling). Compiled with every build of the tests, never
// run: it configures the process-wide `Exponea.shared` against api.exponea.com, and tests touch
// only loopback. The behaviour behind each call is tested on injected instances
// (`ExponeaFacadeTests`, `ExponeaInjectionTests`, `SegmentsModelTests`). The only edits: `_ =`
// before the bare property reads and the unused model, which would otherwise warn, and the
// observers' lines in a function of their own (`@MainActor`, and available where Observation is).
import Foundation
import RealtimeSegments

/// Compile-only: the facade as an app migrating from the Exponea SDK writes it.
@available(*, deprecated, message: "compile-only: calling it would contact api.exponea.com")
func theFixedFacadeCompilesAsAppsWriteIt() async throws {
    // Configuration (before or after registering listeners)
    Exponea.logger.logLevel = .verbose                      // .none, .error, .warning (default), .verbose
    Exponea.shared.configure(
        Exponea.ProjectSettings(projectToken: "TOKEN",
                                authorization: .token("API_KEY"),       // .none, .token(String), .bearer(String)
                                baseUrl: "https://api.exponea.com"),   // baseUrl optional, this is the default
        flushingSetup: Exponea.FlushingSetup(mode: .immediate)          // optional, .immediate is the default
    )
    Exponea.shared.configure(Exponea.StreamSettings(streamId: "STREAM", baseUrl: "https://api.exponea.com"))
    _ = Exponea.shared.isConfigured                            // Bool

    // Real-time listeners
    let callback = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { segments in
        print(segments)                                      // [Segment], called on a background thread
    }
    SegmentationManager.shared.addCallback(callbackData: callback)
    SegmentationManager.shared.removeCallback(callbackData: callback)

    // One-shot reads
    Exponea.shared.getSegments(category: .content()) { segments in }          // force defaults to false
    Exponea.shared.getSegments(force: true, category: .discovery()) { segments in }
    let list: [Segment] = try await Exponea.shared.getSegments(force: false, category: .merchandising())

    // Customer and tracking
    Exponea.shared.identifyCustomer(customerIds: ["registered": "jane@example.com"], properties: ["plan": "gold"], timestamp: nil)
    Exponea.shared.trackEvent(properties: ["price": 9.99, "sku": "A-1"], timestamp: nil, eventType: "purchase")
    Exponea.shared.flushingMode = .manual                     // .immediate, .periodic(Int seconds), .manual
    Exponea.shared.flushData()
    Exponea.shared.flushData { result in }                    // FlushResult (Exponea's): .success(Int), .noInternetConnection, .error(Error), .flushAlreadyInProgress
    Exponea.shared.anonymize()
    _ = Exponea.shared.customerCookie                           // String? (nil before configure)
    Exponea.shared.stopIntegration()
    _ = (list, callback)
}

/// Compile-only: the observable model as a SwiftUI app writes it (the block's last lines).
@available(*, deprecated, message: "compile-only: it listens to the process-wide Exponea.shared")
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor func theObservableModelCompilesAsAppsWriteIt(someSegmentsClient: SegmentsClient) {
    // SwiftUI and other observers (Observation framework: iOS 17+, macOS 14+, tvOS 17+, watchOS 10+, Linux)
    let model = SegmentsModel(categories: [.discovery(), .content()])   // over Exponea.shared
    _ = model.segments(for: .discovery())                     // [Segment]; observable, changes on the main actor
    let other = SegmentsModel(categories: [.discovery()], client: someSegmentsClient)
    _ = other
}
