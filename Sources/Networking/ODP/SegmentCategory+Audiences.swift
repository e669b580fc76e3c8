import SegmentsDomain

extension SegmentCategory {
    /// The `audiences` category: where ``ODPAudienceRepository`` lists qualified ODP audiences.
    public static func audiences() -> SegmentCategory { SegmentCategory("audiences") }
}
