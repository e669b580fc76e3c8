import Foundation
import SegmentsDomain
import SegmentsData

/// The Exponea SDK's listener registry, kept so apps switch by changing their import.
///
/// A thin adapter over an ``Exponea``'s client. Callbacks may be added before configure (they
/// are served once configured, <doc:Behaviour#T2>) and from any thread, in call order; they are
/// called on the client's delivery queue.
///
/// ``shared`` is just the registry of ``Exponea/shared``: ``init(exponea:)`` builds one over any
/// `Exponea`, so code that registers callbacks is unit-tested with an injected client.
public final class SegmentationManager: Sendable {
    /// The registry of ``Exponea/shared``.
    public static let shared = SegmentationManager(exponea: .shared)

    private let client: SegmentsClient

    /// The registry of `exponea`'s client: callbacks added here are served by that integration
    /// and called on its delivery queue. Registries over the same client share their callbacks.
    public init(exponea: Exponea) {
        client = exponea.client
    }

    /// Registers `callbackData`; registering the same value twice gives two registrations
    /// (<doc:Behaviour#M4>).
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
