SELECT x.id1, x.id2, x.id3, x.id4, x.id5, x.id6, x.v1, medium.id1 AS medium_id1, medium.id2 AS medium_id2, medium.id4 AS medium_id4, medium.v2 FROM x JOIN medium ON x.id5 = medium.id5;
