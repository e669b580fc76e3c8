import Foundation

/// A rules file: `{"rules": [ …rule objects… ]}` (a bare array of rules is accepted too).
///
/// Each rule object is described on ``EmulatorSegmentRule``. Rules are evaluated in file order;
/// every category a rule names appears in each fetch answer (as `[]` when no rule matched), so a
/// customer leaving a segment is visible as an emptied category.
public struct EmulatorRuleSet: Hashable, Sendable, Codable {
    /// The rules in evaluation order.
    public var rules: [EmulatorSegmentRule]

    /// A rule set.
    public init(rules: [EmulatorSegmentRule]) {
        self.rules = rules
    }

    /// Reads a rules document; throws `DecodingError` on anything else (text that is not UTF-8 or
    /// nests deeper than ``EmulatorJSON/maximumDepth`` included).
    public init(jsonData: Data) throws {
        try EmulatorJSON.checkBeforeParsing(jsonData)
        let decoder = JSONDecoder()
        if let rules = try? decoder.decode([EmulatorSegmentRule].self, from: jsonData) {
            self.init(rules: rules)
        } else {
            self = try decoder.decode(EmulatorRuleSet.self, from: jsonData)
        }
    }

    /// Reads a rules file.
    public init(contentsOf url: URL) throws {
        try self.init(jsonData: Data(contentsOf: url))
    }

    /// The rules as a pretty-printed document of the documented form.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// The fetch answer for a customer with these events: category → granted segments, in rule order.
    public func segments<Events: Collection>(for events: Events) -> [String: [EmulatorSegment]]
    where Events.Element == EmulatorEvent {
        var answer: [String: [EmulatorSegment]] = [:]
        for rule in rules {
            if answer[rule.category] == nil { answer[rule.category] = [] }
            if rule.matches(events) { answer[rule.category, default: []].append(rule.segment) }
        }
        return answer
    }
}
