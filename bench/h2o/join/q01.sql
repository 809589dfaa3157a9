SELECT x.id1, x.id2, x.id3, x.id4, x.id5, x.id6, x.v1, small.id4 AS small_id4, small.v2 FROM x JOIN small ON x.id1 = small.id1;
