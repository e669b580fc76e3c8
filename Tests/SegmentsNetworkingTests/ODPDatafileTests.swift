import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Candidate segments and the ODP integration from an Optimizely-style datafile.
@Suite(Hang.timeLimit(minutes: 2)) struct ODPDatafileTests {
    static func leaf(_ value: String, match: String = "qualified") -> String {
        #"{"value":"\#(value)","type":"third_party_dimension","name":"odp.audiences","match":"\#(match)"}"#
    }

    static func datafile(typedAudiences conditions: [String], extra: String = "") -> Data {
        let audiences = conditions.enumerated().map { index, condition in
            #"{"id":"\#(index)","name":"audience \#(index)","conditions":\#(condition)}"#
        }.joined(separator: ",")
        return Data(#"{"version":"4","typedAudiences":[\#(audiences)]\#(extra)}"#.utf8)
    }

    @Test(arguments: [
        // (conditions of each typed audience) → candidates
        ([#"["or", \#(leaf("seg-1"))]"#], ["seg-1"]),
        ([#"["and", ["or", ["or", \#(leaf("b"))], ["not", \#(leaf("a"))]]]"#], ["a", "b"]),
        ([#"["or", \#(leaf("x")), \#(leaf("x"))]"#, #"["and", \#(leaf("x")), \#(leaf("w"))]"#], ["w", "x"]),
        ([#"["or", \#(leaf("exact-one", match: "exact")), \#(leaf("q"))]"#], ["q"]),
        ([#"\#(leaf("lonely"))"#], ["lonely"]),
        ([#"["and", ["or", ["and", ["or", ["not", ["or", \#(leaf("deep"))]]]]]]"#], ["deep"]),
        ([#""[\"or\", {\"value\": \"in-a-string\", \"match\": \"qualified\"}]""#], ["in-a-string"]),
        ([#"["or", {"name": "age", "type": "custom_attribute", "match": "gt", "value": 18}]"#], [String]()),
        ([#"["or", {"match": "qualified", "value": 42}]"#], []),
        ([String](), []),
    ] as [([String], [String])])
    func o1_everyQualifiedLeafAtAnyDepthIsACandidateDeduplicatedAndSorted(conditions: [String], expected: [String]) throws {
        #expect(try ODPDatafile.candidateSegments(from: Self.datafile(typedAudiences: conditions)) == expected)
    }

    @Test func o1_onlyTypedAudiencesCount() throws {
        let data = Data(#"{"audiences":[{"id":"1","conditions":"[\"or\", {\"value\": \"legacy\", \"match\": \"qualified\"}]"}]}"#.utf8)
        #expect(try ODPDatafile.candidateSegments(from: data) == [])
    }

    @Test func o1_aVeryDeepConditionTreeDoesNotExhaustTheStack() {
        var tree = JSONValue.object(["value": "bottom", "match": "qualified"])
        for _ in 0..<2_000 { tree = .array(["or", tree]) }
        let datafile = JSONValue.object(["typedAudiences": [.object(["conditions": tree])]])
        #expect(ODPDatafile.candidateSegments(in: datafile) == ["bottom"])
    }

    @Test(arguments: ["", "not json", "[]", "\"text\""])
    func o1_aDatafileThatIsNotAJSONObjectIsAnError(text: String) {
        #expect(throws: SegmentsError.self) { try ODPDatafile.candidateSegments(from: Data(text.utf8)) }
        #expect(throws: SegmentsError.self) { try ODPDatafile.configuration(from: Data(text.utf8)) }
    }

    @Test func o1_theODPIntegrationGivesKeyAndHost() throws {
        let data = Self.datafile(
            typedAudiences: [],
            extra: #","integrations":[{"key":"other"},{"key":"odp","publicKey":"PUB","host":"https://odp.example.com"}]"#)
        let configuration = try #require(try ODPDatafile.configuration(from: data))
        #expect(configuration.apiKey == "PUB")
        #expect(configuration.apiHost == "https://odp.example.com")
        let hostless = Self.datafile(typedAudiences: [], extra: #","integrations":[{"key":"odp","publicKey":"PUB"}]"#)
        #expect(try ODPDatafile.configuration(from: hostless)?.apiHost == ODPConfiguration.defaultAPIHost)
    }

    @Test(arguments: [
        "",
        #","integrations":[]"#,
        #","integrations":[{"key":"odp"}]"#,
        #","integrations":[{"key":"odp","publicKey":""}]"#,
        #","integrations":{"key":"odp"}"#,
    ])
    func o4_aDatafileWithoutAnODPKeyHasNoIntegration(extra: String) throws {
        #expect(try ODPDatafile.configuration(from: Self.datafile(typedAudiences: [], extra: extra)) == nil)
    }
}
