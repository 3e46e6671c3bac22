-- Seed: banks and mobile operators (requisite providers).
-- Names are display names as Russian-language users see them.
-- Codes are stable identifiers from the interface spec; do not rename.

INSERT INTO banks (code, name, country, kind) VALUES
  -- Russia
  ('sberbank',        'Сбербанк',              'RU', 'bank'),
  ('tinkoff',         'Т-Банк',                'RU', 'bank'),
  ('alfabank',        'Альфа-Банк',            'RU', 'bank'),
  ('vtb',             'ВТБ',                   'RU', 'bank'),
  ('raiffeisenbank',  'Райффайзенбанк',        'RU', 'bank'),
  ('gazprombank',     'Газпромбанк',           'RU', 'bank'),
  ('ozon',            'Озон Банк',             'RU', 'bank'),
  ('sovkom',          'Совкомбанк',            'RU', 'bank'),
  ('mts',             'МТС Банк',              'RU', 'bank'),
  ('pochta',          'Почта Банк',            'RU', 'bank'),
  ('rncb',            'РНКБ',                  'RU', 'bank'),
  ('home_bank',       'Хоум Банк',             'RU', 'bank'),
  ('ros_bank',        'Росбанк',               'RU', 'bank'),
  ('uralsib',         'Уралсиб',               'RU', 'bank'),
  ('promsvyazn',      'Промсвязьбанк',         'RU', 'bank'),
  ('bank_open',       'Банк Открытие',         'RU', 'bank'),
  ('mkb',             'МКБ',                   'RU', 'bank'),
  ('rencredit',       'Ренессанс Банк',        'RU', 'bank'),
  ('bspb',            'Банк Санкт-Петербург',  'RU', 'bank'),
  ('ak_bars_bank',    'Ак Барс Банк',          'RU', 'bank'),

  -- Russia: mobile operators (for SIM, a top-up of a phone account)
  ('mts_mobile',      'МТС',                   'RU', 'operator'),
  ('megafon',         'МегаФон',               'RU', 'operator'),
  ('beeline',         'Билайн',                'RU', 'operator'),
  ('t2',              'T2',                    'RU', 'operator'),
  ('yota',            'Yota',                  'RU', 'operator'),

  -- Kazakhstan: banks
  ('kaspi',           'Kaspi Bank',            'KZ', 'bank'),
  ('halyk_bank',      'Халык Банк',            'KZ', 'bank'),
  ('jusan_bank',      'Jusan Bank',            'KZ', 'bank'),
  ('forte',           'ForteBank',             'KZ', 'bank'),
  -- Kazakhstan: mobile operators
  ('beeline_kz',      'Билайн Казахстан',      'KZ', 'operator'),
  ('kcell',           'Kcell',                 'KZ', 'operator'),
  ('activ',           'Activ',                 'KZ', 'operator'),
  ('tele2_kz',        'Tele2 Казахстан',       'KZ', 'operator'),
  ('altel',           'Altel',                 'KZ', 'operator'),

  -- Tajikistan: banks
  ('eskhata',         'Банк Эсхата',           'TJ', 'bank'),
  ('alif_bank',       'Алиф Банк',             'TJ', 'bank'),
  ('arvand',          'Банк Арванд',           'TJ', 'bank'),
  ('vasl_bank',       'Васл Банк',             'TJ', 'bank'),
  -- Tajikistan: mobile operators
  ('tcell',           'Tcell',                 'TJ', 'operator'),
  ('babilon_mobile',  'Вавилон-Мобайл',        'TJ', 'operator'),
  ('megafon_tjs',     'МегаФон Таджикистан',   'TJ', 'operator'),
  ('beeline_tj',      'Билайн Таджикистан',    'TJ', 'operator'),
  ('zet_mobile',      'ZET-Mobile',            'TJ', 'operator'),

  -- Uzbekistan: banks
  ('kapitalbank',     'Капиталбанк',           'UZ', 'bank'),
  ('hamkorbank',      'Хамкорбанк',            'UZ', 'bank'),
  -- Uzbekistan: mobile operators
  ('beeline_uz',      'Билайн Узбекистан',     'UZ', 'operator'),
  ('ucell',           'Ucell',                 'UZ', 'operator'),
  ('mobiuz',          'Mobiuz',                'UZ', 'operator'),
  ('uzmobile',        'Uzmobile',              'UZ', 'operator'),
  ('humans_uz',       'Humans',                'UZ', 'operator'),

  -- Kyrgyzstan: banks
  ('mbank',           'MBANK',                 'KG', 'bank'),
  ('optima_bank',     'Оптима Банк',           'KG', 'bank'),
  -- Kyrgyzstan: mobile operators
  ('beeline_kg',      'Билайн Кыргызстан',     'KG', 'operator'),
  ('megacom',         'MegaCom',               'KG', 'operator'),
  ('o_kg',            'O!',                    'KG', 'operator'),

  -- Azerbaijan: banks
  ('kapital_bank_az', 'Kapital Bank',          'AZ', 'bank'),
  -- Azerbaijan: mobile operators
  ('azercell',        'Azercell',              'AZ', 'operator'),
  ('bakcell',         'Bakcell',               'AZ', 'operator'),
  ('nar',             'Nar',                   'AZ', 'operator'),

  -- Armenia: banks
  ('ameriabank',      'Америабанк',            'AM', 'bank'),
  -- Armenia: mobile operators
  ('viva_am',         'Viva Armenia',          'AM', 'operator'),
  ('team_am',         'Team Telecom Armenia',  'AM', 'operator'),
  ('ucom',            'Ucom',                  'AM', 'operator'),

  -- Georgia: banks
  ('bog',             'Банк Грузии',           'GE', 'bank'),
  ('tbc',             'TBC Банк',              'GE', 'bank'),
  -- Georgia: mobile operators
  ('magti',           'Magti',                 'GE', 'operator'),
  ('silknet',         'Silknet',               'GE', 'operator'),
  ('cellfie',         'Cellfie',               'GE', 'operator'),

  -- Vietnam: banks
  ('vietcombank',     'Vietcombank',           'VN', 'bank'),
  ('techcombank',     'Techcombank',           'VN', 'bank');
