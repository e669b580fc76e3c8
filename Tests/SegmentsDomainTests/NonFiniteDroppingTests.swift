import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// What tracking keeps of properties holding a non-finite number (see Behaviour E6, rev 4): the
/// number is dropped, its key or its array element, and the one warning names every key path dropped,
/// at most ten, then how many more.
@Suite(Hang.timeLimit(minutes: 1)) struct NonFiniteDroppingTests {
    @Test func e6_aNonFiniteNumberIsDroppedAndItsKeyPathNamed() throws {
        let accepted = try ReplayableEvent.accepting(
            ["price": .double(.nan), "sku": "A-1", "cart": [1, .double(.infinity), 2]], root: "properties")
        #expect(accepted.properties == ["sku": "A-1", "cart": [1, 2]])
        #expect(accepted.dropped == ["properties.cart[1]", "properties.price"])
    }

    @Test func e6_propertiesWithoutANonFiniteNumberAreKeptAsGivenWithNoWarning() throws {
        let properties: [String: JSONValue] = ["sku": "A-1", "cart": [1, 2.5, ["k": nil]]]
        let accepted = try ReplayableEvent.accepting(properties)
        #expect(accepted.properties == properties)
        #expect(accepted.dropped.isEmpty)
        #expect(accepted.warning(for: "trackEvent") == nil)
    }

    /// Properties holding `count` NaNs, at `properties.n[0]` … in order.
    private static func warning(droppingNumbers count: Int) throws -> String? {
        let accepted = try ReplayableEvent.accepting(["n": .array(Array(repeating: .double(.nan), count: count))])
        #expect(accepted.dropped == (0..<count).map { "properties.n[\($0)]" })
        return accepted.warning(for: "trackEvent")
    }

    @Test func e6_theWarningNamesTenKeyPathsWithoutACountOfMore() throws {
        let warning = try #require(try Self.warning(droppingNumbers: 10))
        #expect(warning.contains("at properties.n[0], properties.n[1], "))
        #expect(warning.contains("properties.n[9]; the rest is tracked"))
        #expect(!warning.contains("more"))
    }

    @Test func e6_theWarningNamesTheFirstTenKeyPathsAndCountsTheRest() throws {
        let eleven = try #require(try Self.warning(droppingNumbers: 11))
        #expect(eleven.contains("properties.n[9] and 1 more; the rest is tracked"))
        #expect(!eleven.contains("properties.n[10]"))
        let fifteen = try #require(try Self.warning(droppingNumbers: 15))
        #expect(fifteen.contains("properties.n[9] and 5 more; the rest is tracked"))
    }
}
