import Foundation
import SegmentsDomain

/// The GraphQL request body of the ODP audiences query (<doc:Behaviour#ODP-audiences-query>).
///
/// Only the identifier field name is written into the query text, and only after the adapter has
/// checked it against its allow-list; the user id and the audience names travel as variables, so
/// nothing a user or backend controls can change the query.
enum ODPQuery {
    /// The query text for one identifier field.
    static func text(field: AudienceIdentifier.Field) -> String {
        "query($userId: String, $audiences: [String]) {customer(\(field.rawValue): $userId) "
            + "{audiences(subset: $audiences) {edges {node {name state}}}}}"
    }

    /// `{"query": "…", "variables": {"userId": "…", "audiences": […]}}`.
    static func body(field: AudienceIdentifier.Field, userId: String, audiences: [String]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return try encoder.encode(Body(query: text(field: field), variables: .init(userId: userId, audiences: audiences)))
        } catch {
            throw SegmentsError(.invalidConfiguration, "The ODP request body cannot be encoded", underlying: error)
        }
    }

    /// Whether `text` is a GraphQL name: `[_A-Za-z][_0-9A-Za-z]*`.
    static func isName(_ text: String) -> Bool {
        guard let first = text.utf8.first, isNameStart(first) else { return false }
        return text.utf8.allSatisfy { isNameStart($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    private struct Body: Encodable {
        struct Variables: Encodable {
            let userId: String
            let audiences: [String]
        }

        let query: String
        let variables: Variables
    }
}
