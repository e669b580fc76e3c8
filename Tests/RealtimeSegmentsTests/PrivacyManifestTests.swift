import Foundation
import SegmentsTesting
import Testing

/// Behaviour P11: the privacy manifest the `RealtimeSegments` target ships declares every
/// required-reason API category the library sources call, so a change that adds such a call
/// without declaring it fails here instead of in App Store review.
@Suite(Hang.timeLimit(minutes: 1)) struct PrivacyManifestTests {
    /// A category of Apple's required-reason APIs, and the patterns that find a call of one of its
    /// APIs in Swift source (Apple's list: "Describing use of required reason API").
    struct Category: Sendable {
        let name: String
        let approvedReasons: Set<String>
        let patterns: [String]
    }

    static let categories: [Category] = [
        Category(
            name: "NSPrivacyAccessedAPICategoryFileTimestamp", approvedReasons: ["DDA9.1", "C617.1", "3B52.1", "0A2A.1"],
            patterns: [
                #"\b(f|l)?stat(at)?\s*\("#, #"\bf?getattrlist(bulk|at)?\b"#, #"\b(file|content)?[mM]odificationDate\b"#,
                #"\bcreationDate(Key)?\b"#, #"\bNSFile(Creation|Modification)Date\b"#, #"\bNSURL(Creation|ContentModification)DateKey\b"#,
            ]),
        Category(
            name: "NSPrivacyAccessedAPICategorySystemBootTime", approvedReasons: ["35F9.1", "8FFB.1", "3D61.1"],
            patterns: [#"\bsystemUptime\b"#, #"\bmach_absolute_time\b"#]),
        Category(
            name: "NSPrivacyAccessedAPICategoryDiskSpace", approvedReasons: ["85F4.1", "E174.1", "7D9E.1", "B728.1"],
            patterns: [
                #"\b(NSURL)?[vV]olume(Available|Total)Capacity\w*\b"#, #"\bsystem(Free)?Size\b"#, #"\bNSFileSystem(Free)?Size\b"#,
                #"\bf?stat(v)?fs\s*\("#, #"\bf?getattrlist(bulk|at)?\b"#,
            ]),
        Category(
            name: "NSPrivacyAccessedAPICategoryUserDefaults", approvedReasons: ["CA92.1", "1C8F.1", "C56D.1", "AC6B.1"],
            patterns: [#"\b(NS)?UserDefaults\b"#]),
        Category(
            name: "NSPrivacyAccessedAPICategoryActiveKeyboards", approvedReasons: ["3EC4.1", "54BD.1"],
            patterns: [#"\bactiveInputModes\b"#]),
    ]

    /// The library targets' source folders (the products apps link; not the CLI or the benchmarks).
    static let libraryFolders = ["Domain", "Data", "Networking", "Persistence", "Facade", "Testing", "Emulator"]

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let manifestURL = packageRoot.appendingPathComponent("Sources/Facade/PrivacyInfo.xcprivacy")

    /// The manifest as a property list.
    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: manifestURL)
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    /// Each declared category with its reasons.
    static func declaredCategories() throws -> [String: [String]] {
        let types = try #require(try manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var declared: [String: [String]] = [:]
        for entry in types {
            let name = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            declared[name] = try #require(entry["NSPrivacyAccessedAPITypeReasons"] as? [String])
        }
        return declared
    }

    /// Every call of a required-reason API in the Swift files under `root`'s library folders, as
    /// `category → ["path:line: text"]`. Comment lines are skipped (documentation may name an API).
    static func requiredReasonCalls(under root: URL) throws -> [String: [String]] {
        let expressions = try categories.map { category in
            (category.name, try category.patterns.map { try NSRegularExpression(pattern: $0) })
        }
        var found: [String: [String]] = [:]
        for folder in libraryFolders {
            let folderURL = root.appendingPathComponent("Sources").appendingPathComponent(folder)
            let enumerator = try #require(FileManager.default.enumerator(at: folderURL, includingPropertiesForKeys: nil))
            for case let file as URL in enumerator where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    guard !code.hasPrefix("//"), !code.hasPrefix("*"), !code.hasPrefix("/*") else { continue }
                    let range = NSRange(code.startIndex..., in: code)
                    for (name, patterns) in expressions
                    where patterns.contains(where: { $0.firstMatch(in: code, range: range) != nil }) {
                        found[name, default: []].append("\(folder)/\(file.lastPathComponent):\(number + 1): \(code)")
                    }
                }
            }
        }
        return found
    }

    @Test func p11_theManifestIsAPropertyListWithTheRequiredKeys() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(manifest["NSPrivacyAccessedAPITypes"] is [[String: Any]])
        let types = Set(collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String })
        #expect(types == ["NSPrivacyCollectedDataTypeUserID", "NSPrivacyCollectedDataTypeProductInteraction"])
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] as? Bool == true)
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect((entry["NSPrivacyCollectedDataTypePurposes"] as? [String])?.isEmpty == false)
        }
    }

    @Test func p11_everyDeclaredCategoryHasOnlyApprovedReasons() throws {
        let approved = Dictionary(uniqueKeysWithValues: Self.categories.map { ($0.name, $0.approvedReasons) })
        for (name, reasons) in try Self.declaredCategories() {
            let allowed = try #require(approved[name], "\(name) is not a required-reason category")
            #expect(!reasons.isEmpty, "\(name) declares no reason")
            #expect(Set(reasons).isSubset(of: allowed), "\(name): \(reasons) not among \(allowed.sorted())")
        }
    }

    @Test func p11_everyRequiredReasonAPITheLibraryCallsIsDeclared() throws {
        let declared = try Self.declaredCategories()
        let calls = try Self.requiredReasonCalls(under: Self.packageRoot)
        // The scan finds what is there: the storage calls stat, fstat and lstat today.
        #expect(calls["NSPrivacyAccessedAPICategoryFileTimestamp"]?.isEmpty == false)
        for (category, sites) in calls.sorted(by: { $0.key < $1.key }) {
            #expect(declared[category] != nil, "PrivacyInfo.xcprivacy lacks \(category), called at:\n\(sites.joined(separator: "\n"))")
        }
    }
}
