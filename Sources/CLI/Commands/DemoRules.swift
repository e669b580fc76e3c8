import SegmentsEmulator

/// The rules of `segments demo` (and the default of `segments serve`): tracked events turn into
/// segments, one category each.
enum DemoRules {
    static let rules: [EmulatorSegmentRule] = [
        EmulatorSegmentRule(
            category: "discovery", segmentId: "browsers", segmentationId: "engagement",
            attributes: ["name": "Browsers"], eventType: "view_item", minimumCount: 1),
        EmulatorSegmentRule(
            category: "merchandising", segmentId: "cart-builders", segmentationId: "intent",
            attributes: ["name": "Cart builders"], eventType: "add_to_cart", minimumCount: 1),
        EmulatorSegmentRule(
            category: "content", segmentId: "buyers", segmentationId: "lifecycle",
            attributes: ["name": "Buyers"], eventType: "purchase", minimumCount: 1),
        EmulatorSegmentRule(
            category: "discovery", segmentId: "big-spenders", segmentationId: "value",
            attributes: ["name": "Big spenders"], eventType: "purchase", minimumCount: 1,
            property: .init(name: "tier", equals: "gold")),
        EmulatorSegmentRule(
            category: "merchandising", segmentId: "repeat-carts", segmentationId: "intent",
            attributes: ["name": "Repeat carts"], eventType: "add_to_cart", minimumCount: 2),
    ]

    /// The rule the demo adds while its app is in the background, so that the return to the
    /// foreground has something new to show.
    static let returningVisitors = EmulatorSegmentRule(
        category: "discovery", segmentId: "returning-visitors", segmentationId: "engagement",
        attributes: ["name": "Returning visitors"], eventType: "view_item", minimumCount: 1)
}
