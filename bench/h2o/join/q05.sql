SELECT x.id1, x.id2, x.id3, x.id4, x.id5, x.id6, x.v1, big.id1 AS big_id1, big.id2 AS big_id2, big.id4 AS big_id4, big.id5 AS big_id5, big.id6 AS big_id6, big.v2 FROM x JOIN big ON x.id3 = big.id3;
