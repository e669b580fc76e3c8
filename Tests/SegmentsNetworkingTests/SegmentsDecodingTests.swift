import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct SegmentsDecodingTests {
    private static let path = "/webxp/projects/TOKEN/segments"

    /// The example answer of Behaviour, wire format, "Segment answers".
    private static let wireExample = """
        {
          "discovery": [
            { "id": "66140257f4cb337324209871", "segmentation_id": "66140215fb50effc8a7218b4" }
          ],
          "merchandising": [],
          "content": [
            { "id": "66140258aa11bb22cc33dd44", "segmentation_id": "66140216ee55ff66aa77bb88" },
            { "id": "66140259aa11bb22cc33dd45", "segmentation_id": "66140216ee55ff66aa77bb88" }
          ]
        }
        """

    private func fetch(_ body: String, status: Int = 200, harness: Harness = Harness()) async throws -> SegmentsByCategory {
        harness.transport.respond(to: Self.path, with: .json(body, status: status))
        return try await harness.repository.fetchSegments(for: anonymous)
    }

    @Test func wire_decodesTheWireExample() async throws {
        let segments = try await fetch(Self.wireExample)
        #expect(segments == [
            .discovery(): [Segment(id: "66140257f4cb337324209871", segmentationId: "66140215fb50effc8a7218b4")],
            .merchandising(): [],
            .content(): [
                Segment(id: "66140258aa11bb22cc33dd44", segmentationId: "66140216ee55ff66aa77bb88"),
                Segment(id: "66140259aa11bb22cc33dd45", segmentationId: "66140216ee55ff66aa77bb88"),
            ],
        ])
    }

    @Test func wire_emptyObjectIsAValidAnswerWithNoSegments() async throws {
        #expect(try await fetch("{}") == [:])
        #expect(try await fetch("  {}\n", status: 204) == [:])
    }

    @Test func m2_unknownCategoriesAreKept() async throws {
        let segments = try await fetch(#"{"recommendations": [{"id": "r", "segmentation_id": "g"}], "merchandise": []}"#)
        #expect(segments[SegmentCategory("recommendations")] == [Segment(id: "r", segmentationId: "g")])
        #expect(segments[SegmentCategory("merchandise")] == [])
    }

    @Test func m1_extraStringFieldsAreKeptAsAttributes() async throws {
        let segments = try await fetch(#"{"content": [{"id": "a", "segmentation_id": "g", "name": "VIP", "note": ""}]}"#)
        #expect(segments[.content()] == [Segment(id: "a", segmentationId: "g", attributes: ["name": "VIP", "note": ""])])
    }

    @Test func wire_segmentWithoutIdIsDroppedAndLoggedRestStays() async throws {
        let harness = Harness(loggerLevel: .warning)
        let body = """
            {"discovery": [{"segmentation_id": "g"}, {"id": "a", "segmentation_id": "g"}, {"id": "b"}, {}],
             "content": [{"id": "c", "segmentation_id": "h"}]}
            """
        let segments = try await fetch(body, harness: harness)
        #expect(segments[.discovery()] == [Segment(id: "a", segmentationId: "g")])
        #expect(segments[.content()] == [Segment(id: "c", segmentationId: "h")])
        let warnings = harness.logger.messages(at: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.allSatisfy { $0.hasPrefix("Segments:") && $0.contains("discovery") && $0.contains("3") })
    }

    @Test(arguments: [
        ("empty body", ""),
        ("white space only", "  \n"),
        ("not JSON", "<html>captive portal</html>"),
        ("truncated JSON", #"{"discovery": ["#),
        ("top level array", "[]"),
        ("top level string", #""segments""#),
        ("top level number", "42"),
        ("top level null", "null"),
        ("category is an object", #"{"discovery": {"id": "a", "segmentation_id": "g"}}"#),
        ("category is a string", #"{"discovery": "a"}"#),
        ("category is null", #"{"discovery": null}"#),
        ("element is a string", #"{"discovery": ["a"]}"#),
        ("element is an array", #"{"discovery": [["a"]]}"#),
        ("element is null", #"{"discovery": [null]}"#),
        ("value is a number", #"{"discovery": [{"id": 1, "segmentation_id": "g"}]}"#),
        ("value is a bool", #"{"discovery": [{"id": "a", "segmentation_id": true}]}"#),
        ("value is null", #"{"discovery": [{"id": "a", "segmentation_id": "g", "name": null}]}"#),
        ("value is an object", #"{"content": [{"id": "a", "segmentation_id": "g", "x": {}}]}"#),
        ("bad shape after good category", #"{"content": [{"id": "a", "segmentation_id": "g"}], "discovery": 7}"#),
    ])
    func wire_malformedBodyIsAFailedFetchNeverNoSegments(shape: String, body: String) async {
        let error = await segmentsError { _ = try await fetch(body) }
        #expect(error?.code == .invalidResponse, "\(shape)")
        #expect(error?.isTransient == true, "\(shape)")
    }

    @Test func p4_decodingNeverLogsCustomerIds() async throws {
        let harness = Harness(loggerLevel: .verbose)
        _ = try await fetch(#"{"discovery": [{"id": "a"}]}"#, harness: harness)
        let cookie = try #require(anonymous.cookie)
        #expect(!harness.logger.messages.isEmpty)
        #expect(harness.logger.messages.allSatisfy { !$0.contains(cookie) })
    }
}
