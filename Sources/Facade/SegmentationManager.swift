import Foundation
import SegmentsDomain
import SegmentsData

/// The Exponea SDK's listener registry, kept so apps switch by changing their import.
///
/// A thin adapter over `Exponea.shared.client`. Callbacks may be added before configure (they
/// are served once configured, SPEC T2) and from any thread, in call order.
public final class SegmentationManager: Sendable {
    /// The shared instance.
    public static let shared = SegmentationManager(exponea: .shared)

    private let client: SegmentsClient

    /// A registry over `exponea`'s client; `shared` is the one apps use.
    package init(exponea: Exponea) {
        client = exponea.client
    }

    /// Registers `callbackData`; registering the same value twice gives two registrations (SPEC M4).
    public func addCallback(callbackData: SegmentCallbackData) {
        client.engine.addListener(
            SegmentListener(
                category: callbackData.category, includeFirstLoad: callbackData.isIncludeFirstLoad,
                handler: callbackData.onNewData),
            group: callbackData.id)
    }

    /// Removes every registration of `callbackData` (or of any copy of it); unknown values are ignored.
    public func removeCallback(callbackData: SegmentCallbackData) {
        client.engine.removeListeners(group: callbackData.id)
    }
}
