use super::*;
use crate::report::study::published::RefCurves;
use crate::study::repro::published::parse as parse_csv;

fn data() -> crate::study::repro::published::RefData {
    // Two series over clients on two CPU configurations, and deadlocks.
    let mut csv = String::from("series,cpus,clients,metric,value\n");
    for (s, cpus, vals) in [
        ("A", "1CPU", [100.0, 180.0, 150.0, 40.0]),
        ("A", "2CPU", [110.0, 300.0, 360.0, 200.0]),
        ("B", "1CPU", [90.0, 120.0, 130.0, 125.0]),
        ("B", "2CPU", [95.0, 200.0, 240.0, 230.0]),
    ] {
        for (n, v) in [1, 8, 64, 256].iter().zip(vals) {
            csv.push_str(&format!("{s},{cpus},{n},tps,{v}\n"));
        }
    }
    for (n, v) in [(4, 0.0), (8, 0.12), (16, 0.22)] {
        csv.push_str(&format!("A,2CPU,{n},deadlocks_per_s,{v}\n"));
    }
    parse_csv("t.csv", &csv).unwrap()
}

fn check(text: &str) -> Verdict {
    let d = data();
    let c = RefCurves {
        data: &d,
        metric: "tps".into(),
    };
    verdict(&parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}")), &c)
}

#[test]
fn each_function_holds_or_not_on_literal_data() {
    for (text, holds) in [
        ("peak(\"A\") == 360", true),
        ("peak(\"A\", cpus=\"1CPU\") == 180", true),
        (
            "peak_clients(\"A\") > peak_clients(\"B\", cpus=\"1CPU\")",
            false,
        ),
        ("peak_clients(\"B\", cpus=\"1CPU\") == 64", true),
        ("value(\"B\", 256) < 231", true),
        ("sag(\"A\", 256) ~ 44.44", true),
        ("sag(\"B\") > 15", false),
        ("collapse(\"A\", cpus=\"1CPU\") == 256", true),
        ("scalability(\"A\") ~ 2", true),
        ("scalability(\"B\") > 1.9", false),
        ("slower(\"B\") ~ 33.33", true),
        ("rank(\"A\") == 1", true),
        ("rank(\"B\") == 1", false),
        ("first_deadlocks(\"A\") == 8", true),
        ("deadlocks(\"A\", 16) > 0.2", true),
        // Never collapsing is not collapsing by 256.
        ("collapse(\"B\") <= 256", false),
    ] {
        let v = check(text);
        match (holds, &v) {
            (true, Verdict::Holds(_)) | (false, Verdict::DoesNotHold(_)) => {}
            _ => panic!("{text}: {v:?}"),
        }
        assert!(!v.why().is_empty());
    }
}

#[test]
fn missing_data_is_not_measurable_with_why() {
    for (text, why) in [
        ("peak(\"Oracle 10g\") > 1", "Oracle 10g: not in t.csv"),
        ("first_deadlocks(\"B\") == 8", "B: no deadlocks_per_s"),
        ("value(\"A\", 3) > 1", "A: no tps at 3"),
    ] {
        match check(text) {
            Verdict::NotMeasurable(w) => assert!(w.contains(why), "{text}: {w}"),
            v => panic!("{text}: {v:?}"),
        }
    }
}

#[test]
fn bad_statements_say_where() {
    for (text, at, words) in [
        ("peek(\"A\") > 1", 0, "unknown function 'peek'"),
        ("peak(\"A\") >> 1", 11, "expected a number"),
        ("peak(\"A\") 1", 10, "expected a comparison"),
        ("peak(A) > 1", 5, "expected a quoted name"),
        (
            "peak(\"A\", colour=\"x\") > 1",
            10,
            "unknown argument 'colour'",
        ),
        ("value(\"A\") > 1", 0, "needs a client count"),
        ("peak(\"A) > 1", 5, "unterminated string"),
        ("peak(\"A\") > 1 and", 17, "expected a number or a function"),
        ("peak(\"A\") > 1 peak", 14, "unexpected 'peak'"),
        ("2 * 3 > peak(\"A\")", 3, "a number times a number"),
    ] {
        let (pos, msg) = parse(text).unwrap_err();
        assert_eq!(pos, at, "{text}: {msg}");
        assert!(msg.contains(words), "{text}: {msg}");
    }
}

#[test]
fn and_or_and_factors_combine_comparisons() {
    for (text, holds) in [
        // A: peak 360 (2CPU), B: 240.
        ("peak(\"A\") > peak(\"B\") and rank(\"A\") == 1", true),
        ("peak(\"A\") > peak(\"B\") and rank(\"B\") == 1", false),
        ("rank(\"B\") == 1 or peak(\"A\") > peak(\"B\")", true),
        ("rank(\"B\") == 1 or peak(\"B\") > peak(\"A\")", false),
        // and binds tighter than or.
        (
            "rank(\"B\") == 1 and peak(\"B\") > 1 or rank(\"A\") == 1",
            true,
        ),
        ("peak(\"B\") > 0.5 * peak(\"A\")", true),
        ("peak(\"B\") > 0.7 * peak(\"A\")", false),
        ("collapse(\"B\") == never", true),
        ("collapse(\"A\", cpus=\"1CPU\") == never", false),
        // About: within 5 % of the larger side.
        ("peak(\"A\") ~ 350", true),
        ("peak(\"A\") ~ 300", false),
    ] {
        let v = check(text);
        match (holds, &v) {
            (true, Verdict::Holds(_)) | (false, Verdict::DoesNotHold(_)) => {}
            _ => panic!("{text}: {v:?}"),
        }
    }
}

#[test]
fn a_definite_part_decides_over_a_missing_one() {
    // One failing part fails `and` even where another is not measurable;
    // one holding part holds `or`.
    for (text, want) in [
        ("peak(\"Oracle\") > 1 and rank(\"B\") == 1", "does not hold"),
        ("peak(\"Oracle\") > 1 or rank(\"A\") == 1", "holds"),
        (
            "peak(\"Oracle\") > 1 and rank(\"A\") == 1",
            "not measurable here",
        ),
    ] {
        let v = check(text);
        assert_eq!(v.label(), want, "{text}");
        // A decided verdict gives the deciding part's reason alone.
        if want != "not measurable here" {
            assert!(!v.why().contains("Oracle"), "{text}: {}", v.why());
        }
    }
}

#[test]
fn margins_say_by_how_much_in_units_and_percent() {
    let d = data();
    let c = RefCurves {
        data: &d,
        metric: "tps".into(),
    };
    let m = |t: &str| super::check(&parse(t).unwrap(), &c).1.unwrap();
    // 360 > 240: by 120, a third of 360.
    let a = m("peak(\"A\") > peak(\"B\")");
    assert_eq!(a.abs, 120.0);
    assert!((a.pct - 33.333).abs() < 0.01, "{a:?}");
    // Failing: negative.
    assert_eq!(m("peak(\"A\") < peak(\"B\")").abs, -120.0);
    // and: the weakest part.
    assert_eq!(m("peak(\"A\") > 350 and peak(\"A\") > 100").abs, 10.0);
    // or: the strongest.
    assert_eq!(m("peak(\"A\") > 350 or peak(\"A\") > 100").abs, 260.0);
    assert!(m("collapse(\"B\") == never").abs.is_infinite());
}
