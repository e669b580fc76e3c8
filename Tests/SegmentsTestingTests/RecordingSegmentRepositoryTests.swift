import SegmentsDomain
import SegmentsTesting
import Testing

/// The recording segment repository of the test kit: answers per customer id map.
@Suite(Hang.timeLimit(minutes: 2)) struct RecordingSegmentRepositoryTests {
    static let vip: SegmentsByCategory = [.discovery(): [Segment(id: "vip", segmentationId: "tiers")]]
    static let gold: SegmentsByCategory = [.discovery(): [Segment(id: "gold", segmentationId: "tiers")]]
    static let everyone: SegmentsByCategory = [.content(): [Segment(id: "news", segmentationId: "topics")]]
    static let jane = CustomerIds(["cookie": "c-1", "registered": "jane@example.com"])

    @Test func anAnswerForIdsServesEveryCustomerWhoHasThemWhateverItsCookie() async throws {
        let repository = RecordingSegmentRepository()
        repository.answer(Self.everyone)
        repository.answer(Self.vip, forCustomerIds: ["registered": "jane@example.com"])
        #expect(try await repository.fetchSegments(for: Self.jane) == Self.vip)
        let janeOnAnotherDevice = CustomerIds(["cookie": "c-2", "registered": "jane@example.com", "crm": "42"])
        #expect(try await repository.fetchSegments(for: janeOnAnotherDevice) == Self.vip)
        #expect(try await repository.fetchSegments(for: CustomerIds(cookie: "c-1")) == Self.everyone)
        let someoneElse = CustomerIds(["cookie": "c-3", "registered": "joe@example.com"])
        #expect(try await repository.fetchSegments(for: someoneElse) == Self.everyone)
    }

    @Test func everyIdOfTheMapMustMatch() async throws {
        let repository = RecordingSegmentRepository()
        repository.answer(Self.vip, forCustomerIds: ["registered": "jane@example.com", "crm": "42"])
        #expect(try await repository.fetchSegments(for: Self.jane) == [:])
        let withCRM = CustomerIds(Self.jane.values.merging(["crm": "42"]) { $1 })
        #expect(try await repository.fetchSegments(for: withCRM) == Self.vip)
    }

    @Test func theAnswerSetLastWinsAndSettingTheSameIdsAgainReplacesIt() async throws {
        let repository = RecordingSegmentRepository()
        repository.answer(Self.vip, forCustomerIds: ["registered": "jane@example.com"])
        repository.answer(Self.gold, forCookie: "c-1")
        #expect(try await repository.fetchSegments(for: Self.jane) == Self.gold, "the cookie's answer was set last")
        repository.answer(Self.everyone, forCustomerIds: ["registered": "jane@example.com"])
        #expect(try await repository.fetchSegments(for: Self.jane) == Self.everyone, "replaced, and now the last set")
        #expect(try await repository.fetchSegments(for: CustomerIds(cookie: "c-1")) == Self.gold)
    }

    @Test func scriptedFetchesComeBeforeAnswersPerCustomer() async throws {
        let repository = RecordingSegmentRepository()
        repository.answer(Self.vip, forCustomerIds: ["registered": "jane@example.com"])
        repository.answerNextFetch(with: Self.gold)
        repository.failNextFetches(with: SegmentsError(.timeout, "too slow"))
        #expect(try await repository.fetchSegments(for: Self.jane) == Self.gold)
        await #expect(throws: SegmentsError.self) { try await repository.fetchSegments(for: Self.jane) }
        #expect(try await repository.fetchSegments(for: Self.jane) == Self.vip)
        #expect(repository.fetches == [Self.jane, Self.jane, Self.jane])
    }
}
