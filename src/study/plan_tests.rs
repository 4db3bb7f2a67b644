//! Tests of `plan.rs` (kept apart so the module itself stays short).

use super::*;

#[test]
fn keys_round_trip_through_their_string_form() {
    let k = PointKey {
        target: "pg".into(),
        variant: "base".into(),
        cpus: Some(vec![0, 1]),
        workload_index: 0,
        workload: "oltp_read_only".into(),
        clients: 64,
        instances: 1,
        repeat: 2,
        level: None,
    };
    let s = k.to_string();
    assert_eq!(
        s,
        "target=pg/variant=base/cpus=0-1/workload=0:oltp_read_only/clients=64/instances=1/repeat=2"
    );
    assert_eq!(s.parse::<PointKey>().unwrap(), k);
    // Paced points end in their level.
    for level in ["rate=5000", "rate=2500.5", "rate=50%", "users=1000"] {
        let paced = PointKey {
            level: Some(level.into()),
            ..k.clone()
        };
        let s = paced.to_string();
        assert!(s.ends_with(&format!("/repeat=2/{level}")), "{s}");
        assert_eq!(s.parse::<PointKey>().unwrap(), paced);
    }
    for bad in ["rate=0", "rate=-1", "rate=x%", "users=0", "speed=3"] {
        assert!(format!("{s}/{bad}").parse::<PointKey>().is_err(), "{bad}");
    }
    let odd = PointKey {
        variant: "dir=/a/b%c".into(),
        cpus: None,
        ..k
    };
    let s = odd.to_string();
    assert!(s.contains("variant=dir=%2Fa%2Fb%25c/cpus=all/"), "{s}");
    assert_eq!(s.parse::<PointKey>().unwrap(), odd);
    assert!("target=pg".parse::<PointKey>().is_err());
    assert!(s
        .replace("clients=64", "clients=x")
        .parse::<PointKey>()
        .is_err());
    assert!(s.replace("%2F", "%zz").parse::<PointKey>().is_err());
}
