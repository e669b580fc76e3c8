// The app code of AppCode/ (a symlink to Tests/ExponeaCompatibilityTests/AppCode) compiles in
// Swift 5 language mode: this target building is the test (SPEC X1). The test below checks, in
// this mode, that the Exponea SDK's property values convert as they do in Swift 6 mode.
import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 1)) struct Swift5LanguageModeTests {
    @Test func x1_propertiesOfTheExponeaTypesConvertInSwift5Mode() {
        let price: Double = 9.99
        let coupon: String? = nil
        let tags: [String] = ["a", "b"]
        let properties: [String: JSONConvertible] = ["price": price, "coupon": coupon, "tags": tags, "n": 2]
        let converted = properties.mapValues(\.jsonValue)
        #expect(converted == ["price": .double(9.99), "coupon": .null, "tags": .array([.string("a"), .string("b")]), "n": .int(2)])
    }

    @Test func x1_theAppCodeIsBuiltInSwift5Mode() {
        // Referenced so the app code's types are part of this target's tests.
        let client = SegmentsClient(options: .init(runtime: SegmentsRuntime(scheduler: TestScheduler(), clock: TestScheduler()), storage: .inMemory))
        let analytics = ShopAnalytics(exponea: Exponea(client: client))
        #expect(analytics.readBack().configured == false)
    }
}

