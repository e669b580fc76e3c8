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
public struct SegmentCallbackData: Sendable, Equatable {
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

    /// Creates a callback whose handler may be `nil`, as the Exponea SDK declares it: a `nil`
    /// handler registers a listener that is told nothing.
    @_disfavoredOverload
    public init(category: SegmentCategory, isIncludeFirstLoad: Bool, onNewData: (@Sendable ([Segment]) -> Void)?) {
        self.init(category: category, isIncludeFirstLoad: isIncludeFirstLoad, onNewData: onNewData ?? { _ in })
    }

    /// Whether two values are the same registration: a value and its copies are equal; two values
    /// made apart are not, whatever they hold (as in the Exponea SDK).
    public static func == (lhs: SegmentCallbackData, rhs: SegmentCallbackData) -> Bool {
        lhs.id == rhs.id
    }

    /// Calls the handler with `category`'s segments, on the caller's thread (the Exponea SDK's
    /// `fireBlock(category:)`).
    public func fireBlock(category: [Segment]) {
        onNewData(category)
    }
}

/// The Exponea SDK's name for ``Segment``.
@available(*, deprecated, renamed: "Segment")
public typealias SegmentDTO = Segment
