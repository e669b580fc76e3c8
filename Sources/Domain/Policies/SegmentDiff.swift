/// Which categories changed between the baseline and a new answer
/// (<doc:Behaviour#D2>–<doc:Behaviour#D4>).
package enum SegmentDiff {
    /// The categories whose listeners must hear about `new`, each with its full new list.
    ///
    /// - Per category the lists are compared as unordered sets: reordering is no change (D2).
    /// - When `baseline` is `nil` or belongs to other ids than `customer`, every category in `new`
    ///   counts as changed (D3).
    /// - A category that was non-empty in the baseline and is absent or empty now changes to `[]`
    ///   (D4). A listener last told segments that the baseline does not hold (another customer's or
    ///   project's) hears `[]` too: the listener registry compares what each one was last told.
    package static func changes(
        from baseline: SegmentSnapshot?, to new: SegmentsByCategory, for customer: CustomerIds
    ) -> SegmentsByCategory {
        let old = baseline?.segments ?? [:]
        let sameCustomer = baseline?.customer == customer
        var changed: SegmentsByCategory = [:]
        for category in Set(old.keys).union(new.keys) {
            let before = old[category] ?? []
            let after = new[category] ?? []
            let isChange: Bool
            if !sameCustomer && new[category] != nil {
                isChange = true
            } else {
                isChange = !sameSegments(before, after)
            }
            if isChange { changed[category] = after }
        }
        return changed
    }

    /// Whether two lists hold the same segments, in any order (<doc:Behaviour#D2>). The same list in
    /// the same order is the common "no change" and cheap to see; lists whose ids differ — the
    /// common change — are told apart by their ids alone, without hashing every segment's
    /// attributes; only lists with the same ids are compared in full.
    package static func sameSegments(_ first: [Segment], _ second: [Segment]) -> Bool {
        if first == second { return true }
        func ids(_ list: [Segment]) -> Set<SegmentIds> {
            Set(list.lazy.map { SegmentIds(id: $0.id, segmentationId: $0.segmentationId) })
        }
        guard ids(first) == ids(second) else { return false }
        return Set(first) == Set(second)
    }

    /// The two ids of a segment: a cheap key before a full comparison.
    private struct SegmentIds: Hashable {
        let id: String
        let segmentationId: String
    }
}
