from zoo import Area
AREA = Area()
MEMBERS = ()
