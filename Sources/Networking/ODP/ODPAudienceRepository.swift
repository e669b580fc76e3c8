import Foundation
import SegmentsDomain

/// ODP audiences as a ``SegmentRepository`` (<doc:Behaviour#O5>): the real-time engine — listeners,
/// debounce, change delivery, one-shot reads — then runs over ODP like over any other backend.
///
/// Every fetch asks which of ``candidates`` the customer qualifies for and answers them as one
/// category (``category``, `audiences` by default), each qualified audience as a ``Segment`` whose
/// `id` is the audience name and whose `segmentationId` is ``segmentationId``. The engine keeps its
/// own baseline and cache, so this repository always asks the backend.
///
/// The customer is identified by ``identification``; by default the first of its ids named
/// `fs_user_id`, `vuid` or `registered`, else its cookie as a visitor id (`vuid_<cookie>` unless the
/// cookie already starts with `vuid_`). ODP needs no link step: ``linkCustomerIds(_:)`` does nothing.
package struct ODPAudienceRepository: SegmentRepository {
    /// The `segmentationId` of every audience segment: `odp`.
    package static let segmentationId = "odp"

    /// The default identification of a customer (see the type's documentation).
    package static let defaultIdentification: @Sendable (CustomerIds) -> AudienceIdentifier? = { customer in
        for key in ["fs_user_id", "vuid", "registered"] {
            if let value = customer.values[key], !value.isEmpty { return AudienceIdentifier(userId: value) }
        }
        guard let cookie = customer.cookie, !cookie.isEmpty else { return nil }
        let prefixed = AudienceIdentifier.field(forUserId: cookie) == .vuid ? cookie : AudienceIdentifier.visitorIdPrefix + cookie
        return AudienceIdentifier(field: .vuid, value: prefixed)
    }

    /// Where qualified audiences come from.
    package let fetcher: any AudienceSegmentFetcher
    /// The audience names asked about.
    package let candidates: [String]
    /// The category the qualified audiences are listed under.
    package let category: SegmentCategory
    /// Which identifier a customer is asked about; `nil` means the customer cannot be asked about.
    package let identification: @Sendable (CustomerIds) -> AudienceIdentifier?

    /// A repository over any audience backend.
    package init(
        fetcher: any AudienceSegmentFetcher, candidates: [String], category: SegmentCategory = .audiences(),
        identification: @escaping @Sendable (CustomerIds) -> AudienceIdentifier? = defaultIdentification
    ) {
        self.fetcher = fetcher
        self.candidates = candidates
        self.category = category
        self.identification = identification
    }

    /// A repository over ODP GraphQL; `logger` receives the adapter's warnings (see ``ODPAudienceSegmentFetcher``).
    package init(
        configuration: ODPConfiguration, transport: any SegmentsTransport, clock: any SegmentsClock, candidates: [String],
        category: SegmentCategory = .audiences(), logger: (any SegmentsLogger)? = nil
    ) {
        self.init(
            fetcher: ODPAudienceSegmentFetcher(configuration: configuration, transport: transport, clock: clock, logger: logger),
            candidates: candidates, category: category)
    }

    /// `[category: qualified audiences]`; `[category: []]` without a request when there are no candidates.
    ///
    /// - Throws: ``SegmentsError`` `.invalidIdentifier` when the customer has no usable id or ODP does
    ///   not know it, or the fetcher's error.
    package func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
        guard !candidates.isEmpty else { return [category: []] }
        guard let identifier = identification(customer) else {
            throw SegmentsError(.invalidIdentifier, "The customer has no id to ask ODP about")
        }
        let names = try await fetcher.fetchQualifiedSegments(for: identifier, candidates: candidates)
        return [category: names.map { Segment(id: $0, segmentationId: Self.segmentationId) }]
    }

    /// Does nothing: ODP identifies the customer by the id it is asked about.
    package func linkCustomerIds(_ customer: CustomerIds) async throws {}
}
