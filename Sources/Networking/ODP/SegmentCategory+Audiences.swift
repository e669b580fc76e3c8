import SegmentsDomain

extension SegmentCategory {
    /// The `audiences` category: where the ODP backend (`SegmentsClient.Backend.odp`) lists qualified ODP audiences.
    public static func audiences() -> SegmentCategory { SegmentCategory("audiences") }
}
