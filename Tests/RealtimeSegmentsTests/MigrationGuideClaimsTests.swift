import Foundation
import SegmentsTesting
import Testing

/// Behaviour X2: the migration guide calls "the same" only what Exponea 4.x app code is compiled
/// against here. Each row of its API table whose RealtimeSegments column starts with "same" names,
/// in its Exponea column, declarations (`Exponea.shared.flushData()`, `SegmentCallbackData(…)`);
/// the member each code span names must be used by the Exponea compatibility tests' sources (the
/// app code of X1 and the tests over it), so a claim of sameness never stands on nothing.
@Suite(Hang.timeLimit(minutes: 1)) struct MigrationGuideClaimsTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The rows of the table under "The API side by side" as (Exponea column, RealtimeSegments column).
    private static func apiRows() throws -> [(exponea: String, ours: String)] {
        let guide = try String(contentsOf: root.appendingPathComponent("Docs/MigratingFromExponea.md"), encoding: .utf8)
        guard let start = guide.range(of: "## The API side by side"), let end = guide.range(of: "## Behaviours that differ") else {
            return []
        }
        return guide[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `") else { return nil }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { return nil }
            return (cells[1], cells[2])
        }
    }

    /// The member a code span names: the last identifier before its first `(` (`flushData` in
    /// `Exponea.shared.flushData()`); names an app chooses (`MyLogger`) are not the SDK's.
    private static func namedMember(_ span: Substring) -> String? {
        let head = span.split(separator: "(", maxSplits: 1).first ?? span
        let identifiers = head.split { !($0.isLetter || $0.isNumber || $0 == "_") }
        guard let last = identifiers.last, !last.hasPrefix("My") else { return nil }
        return String(last)
    }

    private static func codeSpans(_ text: String) -> [Substring] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
    }

    @Test func x2_everyAPIRowCalledTheSameNamesOnlyWhatTheExponeaAppCodeIsCompiledAgainst() throws {
        let sources = try FileManager.default.subpathsOfDirectory(atPath: Self.root.appendingPathComponent("Tests").path)
            .filter { $0.hasPrefix("ExponeaCompatibility") && $0.hasSuffix(".swift") }
            .map { try String(contentsOf: Self.root.appendingPathComponent("Tests").appendingPathComponent($0), encoding: .utf8) }
            .joined(separator: "\n")
        let same = try Self.apiRows().filter { $0.ours.hasPrefix("same") }
        #expect(same.count >= 15, "the guide's API table calls \(same.count) rows the same")
        var unbacked: [String] = []
        for row in same {
            for member in Self.codeSpans(row.exponea).compactMap(Self.namedMember) where !sources.contains(member) {
                unbacked.append("\(member) (in \(row.exponea.prefix(60)))")
            }
        }
        #expect(unbacked.isEmpty, "called the same, but no Exponea compatibility test uses: \(unbacked)")
    }
}
