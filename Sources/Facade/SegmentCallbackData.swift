import Foundation
import SegmentsDomain

/// A listener of one category of segments, as the Exponea SDK spells it (<doc:Behaviour#M4>).
///
/// A value identifies its registration: registering the same value twice gives two
/// registrations, and removing it (or any copy of it) removes all of them.
///
/// ```swift
/// let callback = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { segments in
///     print(segments)   // on the delivery queue, never the caller's thread
/// }
/// SegmentationManager.shared.addCallback(callbackData: callback)
/// ```
public struct SegmentCallbackData: Sendable {
    /// The category listened to.
    public let category: SegmentCategory
    /// Whether the callback is told the current list once, even when nothing changed
    /// (<doc:Behaviour#D6>).
    public let isIncludeFirstLoad: Bool
    /// Called with the category's full list whenever it changes.
    public let onNewData: @Sendable ([Segment]) -> Void
    /// The identity shared by this value and its copies.
    let id = UUID()

    /// Creates a callback.
    public init(
        category: SegmentCategory, isIncludeFirstLoad: Bool, onNewData: @escaping @Sendable ([Segment]) -> Void
    ) {
        self.category = category
        self.isIncludeFirstLoad = isIncludeFirstLoad
        self.onNewData = onNewData
    }
}

/// The Exponea SDK's name for ``Segment``.
@available(*, deprecated, renamed: "Segment")
public typealias SegmentDTO = Segment
